//! UUIDv5 (RFC 9562, over SHA-1) under this toolkit's plan namespace: the deterministic names of
//! plans without an id and of references to steps that do not exist.

use std::sync::LazyLock;

use uuid::Uuid;

/// UUIDv5(URL, `urn:planrun-migrate:plan`).
static PLAN_NAMESPACE: LazyLock<Uuid> =
    LazyLock::new(|| Uuid::new_v5(&Uuid::NAMESPACE_URL, b"urn:planrun-migrate:plan"));

/// The UUIDv5 of `name` under the plan namespace.
pub(super) fn plan_uuid(name: &[u8]) -> u128 {
    Uuid::new_v5(&PLAN_NAMESPACE, name).as_u128()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_uuids_are_pythons_uuid5_under_the_plan_namespace() {
        // Python: uuid.uuid5(uuid.NAMESPACE_URL, "urn:planrun-migrate:plan")
        assert_eq!(
            PLAN_NAMESPACE.as_u128(),
            0x97d24298_6edc_5f19_8cd6_05df47565f94
        );
        // Python: uuid.uuid5(that namespace, "plan-a")
        assert_eq!(plan_uuid(b"plan-a"), 0x90e12334_ae69_5738_ae90_dfda0591433b);
    }
}
