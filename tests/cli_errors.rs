//! How the CLI reports an error: `error: ` and the error's causes, `: `-separated, each said
//! once, exit 2.

use std::process::Command;

/// What `planrun args` printed on stderr, after checking that it failed with exit 2.
fn error_of(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_cause_the_error_already_ends_with_is_not_said_again() {
    // The store error says its path and its I/O cause; anyhow's `{:#}` would repeat the cause.
    let not_a_dir = std::io::Error::from_raw_os_error(20);
    assert_eq!(
        error_of(&["gen", "--runs", "1", "--out", "/dev/null/x"]),
        format!("error: cannot generate a store in /dev/null/x: /dev/null/x: {not_a_dir}\n")
    );
}

#[test]
fn a_cause_the_error_does_not_say_is_said() {
    let missing = std::io::Error::from_raw_os_error(2);
    assert_eq!(
        error_of(&["validate", "/nonexistent/planrun-x.json"]),
        format!("error: cannot read /nonexistent/planrun-x.json: {missing}\n")
    );
}
