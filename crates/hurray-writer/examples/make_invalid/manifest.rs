//! The manifest: one [`Case`] per file, collected in a [`Corpus`].

use serde_json::{json, Value as Json};

/// The rule for regions out of file order, overlapping, or with a gap that is
/// neither allowed padding (the reader's `rule::LAYOUT_ORDER`).
pub(super) const LAYOUT_ORDER: &str =
    "file-format.md § File Layout; NOTES.md 'Padding after a tensor's last buffer' and 'Overlapping regions'";

pub(super) struct Case {
    pub(super) file: String,
    pub(super) rule: String,
    pub(super) spec: String,
    pub(super) variant: String,
    pub(super) field: String,
    pub(super) stage: &'static str,
    pub(super) tensor: Option<String>,
    pub(super) also: Option<String>,
    pub(super) gap: Option<String>,
    pub(super) bytes: Vec<u8>,
}

#[derive(Default)]
pub(super) struct Corpus {
    pub(super) cases: Vec<Case>,
}

impl Corpus {
    /// Adds a file: `stage` is `open`, `tensor`, `data` or `file`; for the
    /// last three the offending tensor defaults to `t`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add(
        &mut self,
        file: &str,
        rule: &str,
        spec: &str,
        stage: &'static str,
        variant: &str,
        field: &str,
        bytes: Vec<u8>,
    ) -> &mut Case {
        assert!(!self.cases.iter().any(|c| c.file == file), "duplicate file name {file}");
        self.cases.push(Case {
            file: format!("{file}.hry"),
            rule: rule.into(),
            spec: spec.into(),
            variant: variant.into(),
            field: field.into(),
            stage,
            tensor: (stage != "open").then(|| "t".to_string()),
            also: None,
            gap: None,
            bytes,
        });
        self.cases.last_mut().unwrap()
    }
}

impl Case {
    pub(super) fn tensor(&mut self, name: &str) -> &mut Self {
        self.tensor = Some(name.into());
        self
    }

    pub(super) fn also(&mut self, what: &str) -> &mut Self {
        self.also = Some(what.into());
        self
    }

    /// Marks a file the reader does not yet answer as expected (reported by
    /// the corpus test, not failed). None at present.
    #[allow(dead_code)]
    pub(super) fn gap(&mut self, what: &str) -> &mut Self {
        self.gap = Some(what.into());
        self
    }

    pub(super) fn to_json(&self) -> Json {
        let mut v = json!({
            "file": self.file,
            "rule": self.rule,
            "spec": self.spec,
            "stage": self.stage,
            "expect_variant": self.variant,
            "expect_field": self.field,
        });
        if let Some(t) = &self.tensor {
            v["offending_tensor"] = json!(t);
        }
        if let Some(a) = &self.also {
            v["also_breaks"] = json!(a);
        }
        if let Some(g) = &self.gap {
            v["known_gap"] = json!(g);
        }
        v
    }
}
