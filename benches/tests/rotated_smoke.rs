//! The smoke run of the `rotated` binary (CI runs the bench targets' smoke
//! runs through `cargo test`; this is the same for the one benchmark that
//! is a plain binary): tiny inputs, every open size and scan input
//! measured, every ratio positive and finite.

use std::process::Command;

fn positive(v: &serde_json::Value, what: &str) {
    let r = v.as_f64().unwrap_or(f64::NAN);
    assert!(r.is_finite() && r > 0.0, "{what} = {r}");
}

#[test]
fn rotated_measures_every_input_on_tiny_files() {
    let out = Command::new(env!("CARGO_BIN_EXE_rotated"))
        .args(["--smoke", "--rounds", "2"])
        .output()
        .expect("run rotated");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");

    let open = &json["open"];
    assert_eq!((open["rounds"].as_u64(), open["batch"].as_u64()), (Some(4), Some(200)));
    let sizes = open["sizes"].as_array().expect("sizes");
    let labels: Vec<&str> = sizes.iter().filter_map(|s| s["size"].as_str()).collect();
    assert_eq!(labels, ["16KiB", "64KiB"]);
    // The smallest against itself, round by round: exactly 1.
    assert_eq!(sizes[0]["view_over_view_smallest"].as_f64(), Some(1.0));
    for (size, v) in labels.iter().zip(sizes) {
        for key in ["view_s", "bare_s", "view_over_bare", "view_over_view_smallest"] {
            positive(&v[key], &format!("open {size} {key}"));
        }
    }

    let scan = json["scan"].as_object().expect("scan");
    let names: Vec<&str> = scan.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "coo_random10",
            "csc_onecol",
            "csc_random10",
            "csc_short2",
            "csr_random10"
        ]
    );
    for (name, group) in scan {
        assert_eq!(group["rounds"], 2, "{name}");
        // 512 non-zeros: 4 KiB of indices (COO: 8 KiB), plus the pointers.
        assert!(group["bytes"].as_f64().is_some_and(|b| b >= 4096.0), "{name}");
        for key in ["validate_over_sum_1thread", "parallel_over_sum_2threads"] {
            positive(&group[key], &format!("{name} {key}"));
        }
    }
}
