//! Writing many runs that share their plan and config: the shared parts are rendered once, as
//! they appear inside a pretty-printed run, and copied into each run whose part equals them.
//! The bytes are those of `serde_json::to_writer_pretty(run)`, which the tests check.

use std::sync::Arc;

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;

use crate::run::FIELDS;
use crate::{Config, PlanRunV2, PlanV2};

/// A value and its pretty JSON text as a field of a run (one level deep) writes it.
#[derive(Debug, Clone)]
pub struct Rendered<T> {
    value: Arc<T>,
    text: Box<str>,
}

impl<T: Serialize + PartialEq> Rendered<T> {
    /// Renders `value` once.
    pub fn new(value: impl Into<Arc<T>>) -> Self {
        let value = value.into();
        // Inside `[…]` the value is written one level down, as a field of a run is; by the
        // writer that writes the runs (serde_json's bytes, faster).
        let mut bytes = Vec::new();
        planrun_wire::json::to_vec_pretty(&mut bytes, &[&*value]).expect("V2 values are JSON");
        let inner = &bytes["[\n  ".len()..bytes.len() - "\n]".len()];
        let text = std::str::from_utf8(inner)
            .expect("JSON text is UTF-8")
            .into();
        Rendered { value, text }
    }

    /// The value rendered, to be shared by the runs that hold it.
    pub fn value(&self) -> &Arc<T> {
        &self.value
    }

    /// The rendered text when `value` is (or equals) the rendered value.
    fn text_for<'a>(this: Option<&'a Self>, value: &Arc<T>) -> Option<Raw<'a>> {
        this.filter(|r| Arc::ptr_eq(&r.value, value) || r.value == *value)
            .map(|r| Raw(&r.text))
    }
}

/// JSON text written as it is, as serde_json's `RawValue` is (through the struct name its
/// serializers and `planrun_wire::json`'s take raw text by). The rendered texts are written by
/// the JSON writer itself, so they are not parsed again to be trusted as one JSON value.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Raw<'a>(&'a str);

impl Serialize for Raw<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        const TOKEN: &str = "$serde_json::private::RawValue";
        let mut s = serializer.serialize_struct(TOKEN, 1)?;
        s.serialize_field(TOKEN, self.0)?;
        s.end()
    }
}

/// The parts of runs rendered once: either may be absent, and a run whose part differs from
/// the rendered one gets its own written as usual.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shared<'a> {
    /// The plan the runs execute.
    pub plan: Option<&'a Rendered<PlanV2>>,
    /// The config the runs execute with.
    pub config: Option<&'a Rendered<Config>>,
}

/// Appends `run` to `out` as `serde_json::to_writer_pretty` writes it, copying the shared parts'
/// text (and writing the rest with `planrun_wire::json`, which writes the same bytes faster).
pub fn to_vec_pretty(
    out: &mut Vec<u8>,
    run: &PlanRunV2,
    shared: Shared<'_>,
) -> serde_json::Result<()> {
    planrun_wire::json::to_vec_pretty(out, &WithShared { run, shared })
}

struct WithShared<'a> {
    run: &'a PlanRunV2,
    shared: Shared<'a>,
}

impl Serialize for WithShared<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let run = self.run;
        let len = FIELDS.len() - usize::from(run.legacy.is_none());
        let mut s = serializer.serialize_struct("PlanRunV2", len)?;
        let [id, state, step, plan, end_user, outputs, final_output, inputs, config, clarifications, legacy] =
            FIELDS;
        s.serialize_field(id, &run.id)?;
        s.serialize_field(state, &run.state)?;
        s.serialize_field(step, &run.current_step_index)?;
        match Rendered::text_for(self.shared.plan, &run.plan) {
            Some(text) => s.serialize_field(plan, &text)?,
            None => s.serialize_field(plan, &run.plan)?,
        }
        s.serialize_field(end_user, &run.end_user)?;
        s.serialize_field(outputs, &run.step_output_values)?;
        s.serialize_field(final_output, &run.final_output)?;
        s.serialize_field(inputs, &run.plan_run_inputs)?;
        match Rendered::text_for(self.shared.config, &run.config) {
            Some(text) => s.serialize_field(config, &text)?,
            None => s.serialize_field(config, &run.config)?,
        }
        s.serialize_field(clarifications, &run.clarifications)?;
        if let Some(residue) = &run.legacy {
            s.serialize_field(legacy, residue)?;
        }
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_equal_to_the_rendered_one_is_copied_and_only_then() {
        let config = Arc::new(Config::sdk_defaults());
        let rendered = Rendered::new(Arc::clone(&config));
        let text = Rendered::text_for(Some(&rendered), &config).expect("copied");
        let top = serde_json::to_string_pretty(&config).unwrap();
        assert_eq!(text.0, top.replace('\n', "\n  "));
        // serde_json's serializers take it as raw text, as they take a `RawValue`.
        let raw = serde_json::value::RawValue::from_string(text.0.to_owned()).unwrap();
        assert_eq!(
            serde_json::to_string(&text).unwrap(),
            serde_json::to_string(&raw).unwrap()
        );
        let equal = Arc::new(Config::sdk_defaults());
        assert_eq!(
            Rendered::text_for(Some(&rendered), &equal).map(|raw| raw.0),
            Some(text.0)
        );
        let mut other = Config::sdk_defaults();
        other.storage_dir = Some("elsewhere".to_owned());
        assert!(Rendered::text_for(Some(&rendered), &Arc::new(other)).is_none());
    }
}
