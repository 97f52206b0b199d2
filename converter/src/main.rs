//! `planrun`: detect, convert, migrate and downgrade stored Portia SDK runs.

mod cli;

/// Conversion allocates many small strings and maps; mimalloc cuts the allocator's share of the
/// batch profile (malloc/free were a fifth of it).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::run()
}
