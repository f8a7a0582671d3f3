//! The model app (fixtures/modelapp): all-MiniLM-L6-v2 in numpy must
//! reproduce the model card's similarities, and the check must fail for a
//! corrupted weight and for padding without the mask (the twins live in
//! fixtures/modelapp/test_minilm.py, run here in the runner's venv, where
//! the tests prepare with every row's pins, `runner prepare --rows all`'s),
//! and the numba views (minilm_numba.py) give the same reply, the holding
//! one keeping the GIL through its call and its nogil twin not. The first
//! run on a machine compiles the numba views into the venv's cache
//! (.gates/venv/var/numba-cache: 11 s quiet, up to 29 s under load),
//! later runs load it.
//! A few seconds: one model load and a handful of forward passes, BLAS on
//! one thread so that a busy machine does not stretch it.

mod common;

use common::root;

#[test]
fn the_similarity_check_passes_on_the_real_weights_and_fails_on_corrupted_ones() {
    common::every_row_ready();
    let python = root().join(".gates/venv/bin/python");
    let out = std::process::Command::new(&python)
        .args(["-m", "unittest", "-v", "test_minilm"])
        .current_dir(root().join("fixtures/modelapp"))
        .env("OPENBLAS_NUM_THREADS", "1")
        .env("HF_HUB_OFFLINE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // unittest -v writes `NAME (module.Class.NAME) ... ok` (3.11+) or
    // `NAME ... ok`: each test must have run and passed.
    for name in [
        "test_the_real_weights_reproduce_the_model_card",
        "test_a_corrupted_weight_fails_it",
        "test_padding_without_the_mask_fails_it",
        "test_the_numba_views_compute_the_same_reply",
        "test_a_corrupted_weight_fails_the_numba_view_too",
        "test_the_numba_hold_view_keeps_the_gil_and_its_twin_releases_it",
    ] {
        assert!(
            err.lines()
                .any(|l| l.starts_with(name) && l.trim_end().ends_with("... ok")),
            "{name} did not pass:\n{err}"
        );
    }
}
