//! Composite heads nested several levels deep bind the right members
//! (`layouts/composite.md` § Binding): each head's members are the next
//! `member_count` subtrees. A review found H0 of
//! `H0 group(2) > H1 group(1) > H2 group(1) > H3 group(1) > A, then B`
//! bound to `[H1, H3]`: the subtree sizes were recomputed at the deepest
//! allowed level, where H3's member no longer resolved.

use hurray_reader::{AlignedBytes, HurrayFile, Options};
use hurray_writer::{BufferData, CompositeHead, ElementType, FileWriter, TensorDescriptor, WriterOptions};

#[test]
fn nested_heads_bind_whole_subtrees() {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let head = |n| TensorDescriptor::composite_head(ElementType::Float32, vec![2], CompositeHead::group(n));
    for (name, n) in [("H0", 2), ("H1", 1), ("H2", 1), ("H3", 1)] {
        w.write_tensor(name, &head(n), Vec::new()).unwrap();
    }
    let leaf = TensorDescriptor::row_major(ElementType::Float32, vec![2]).unwrap();
    for (name, values) in [("A", [1.0f32, 2.0]), ("B", [3.0, 4.0])] {
        w.write_tensor(name, &leaf, vec![BufferData::from_slice(&values)])
            .unwrap();
    }
    let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let members = |name: &str| -> Vec<&str> {
        let t = file.tensor(name).unwrap();
        t.composite_members()
            .iter()
            .map(|&p| file.entries()[p].name())
            .collect()
    };
    assert_eq!(members("H0"), ["H1", "B"]);
    assert_eq!(members("H1"), ["H2"]);
    assert_eq!(members("H2"), ["H3"]);
    assert_eq!(members("H3"), ["A"]);
    file.validate().unwrap();
}
