# syntax=docker/dockerfile:1.19
# The image the Kubernetes Job of docs/migration.md names ("## Sharding"):
#
#   docker build -t registry.example.com/planrun:0.1 .
#
# `planrun` on PATH (/usr/local/bin) in a Debian slim image, with the `sh` the Job runs it with.
# CI does not build it (there is no Docker there); tests/migrate_shards.rs checks only that the
# guide's Job and this file agree.

# The toolchain the workspace is built and tested with; the release profile (fat LTO) as is.
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# A local target/ (tens of GB in a development tree) is no part of the build.
COPY --exclude=target --exclude=.git . .
RUN cargo build --release --locked -p planrun --bin planrun

# Same Debian release as the build stage, so the binary's glibc is there.
FROM debian:bookworm-slim
COPY --from=build /src/target/release/planrun /usr/local/bin/planrun
CMD ["planrun", "--help"]
