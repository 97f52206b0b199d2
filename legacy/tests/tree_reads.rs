//! What the SDK writes is read through the light tree (`planrun_wire::json::Node`) itself, never
//! left to the `Value` reader (which would give the same document, only slower): every typed
//! model of every wire version reads straight out of the tree of its SDK text and writes the
//! same bytes again.

use planrun_legacy::strategies::{end_user, local, run, tool_call};
use planrun_legacy::{
    EndUser, LegacyRun, LocalDataValue, RunR1, RunR2, RunR3, RunR4, RunR5, RunR6, RunW1,
    ToolCallRecord, Version,
};
use planrun_wire::json::{to_sdk_json, Node};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

fn read_directly<T: DeserializeOwned + Serialize>(text: &str) -> Result<(), TestCaseError> {
    let node = Node::parse(text).expect("the SDK writes JSON");
    let typed = T::deserialize(node).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(to_sdk_json(&typed), text);
    Ok(())
}

proptest! {
    #[test]
    fn sdk_written_documents_are_read_without_the_value_tree(
        doc in prop::sample::select(Version::ALL.to_vec()).prop_flat_map(run),
        user in end_user(Version::HEAD),
        value in local(),
        call in tool_call(Version::HEAD),
    ) {
        let text = to_sdk_json(&doc);
        match doc {
            LegacyRun::W1(_) => read_directly::<RunW1>(&text)?,
            LegacyRun::R0(_) | LegacyRun::R1(_) => read_directly::<RunR1>(&text)?,
            LegacyRun::R2(_) => read_directly::<RunR2>(&text)?,
            LegacyRun::R3(_) => read_directly::<RunR3>(&text)?,
            LegacyRun::R4(_) => read_directly::<RunR4>(&text)?,
            LegacyRun::R5(_) => read_directly::<RunR5>(&text)?,
            LegacyRun::R6(_) => read_directly::<RunR6>(&text)?,
        }
        read_directly::<EndUser>(&to_sdk_json(&user))?;
        read_directly::<LocalDataValue>(&to_sdk_json(&value))?;
        read_directly::<ToolCallRecord>(&to_sdk_json(&call))?;
    }
}
