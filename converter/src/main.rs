//! `planrun`: detect, convert, migrate and downgrade stored Portia SDK runs.

mod cli;

fn main() -> std::process::ExitCode {
    cli::run()
}
