//! Writing many runs that share their plan and config: the shared parts are rendered once, as
//! they appear inside a pretty-printed run, and copied into each run whose part equals them.
//! The bytes are those of `serde_json::to_writer_pretty(run)`, which the tests check.

use std::sync::Arc;

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::run::FIELDS;
use crate::{Config, PlanRunV2, PlanV2};

/// A value and its pretty JSON text as a field of a run (one level deep) writes it.
#[derive(Debug, Clone)]
pub struct Rendered<T> {
    value: Arc<T>,
    /// Written as it is by serde_json's serializer, in place of the value.
    text: Box<RawValue>,
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
        let inner = std::str::from_utf8(inner).expect("JSON text is UTF-8");
        let text = RawValue::from_string(inner.to_owned()).expect("one JSON value");
        Rendered { value, text }
    }

    /// The value rendered, to be shared by the runs that hold it.
    pub fn value(&self) -> &Arc<T> {
        &self.value
    }

    /// The rendered text when `value` is (or equals) the rendered value.
    fn text_for<'a>(this: Option<&'a Self>, value: &Arc<T>) -> Option<&'a RawValue> {
        this.filter(|r| Arc::ptr_eq(&r.value, value) || r.value == *value)
            .map(|r| &*r.text)
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
            Some(text) => s.serialize_field(plan, text)?,
            None => s.serialize_field(plan, &run.plan)?,
        }
        s.serialize_field(end_user, &run.end_user)?;
        s.serialize_field(outputs, &run.step_output_values)?;
        s.serialize_field(final_output, &run.final_output)?;
        s.serialize_field(inputs, &run.plan_run_inputs)?;
        match Rendered::text_for(self.shared.config, &run.config) {
            Some(text) => s.serialize_field(config, text)?,
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
        assert_eq!(text.get(), top.replace('\n', "\n  "));
        let equal = Arc::new(Config::sdk_defaults());
        assert_eq!(
            Rendered::text_for(Some(&rendered), &equal).map(RawValue::get),
            Some(text.get())
        );
        let mut other = Config::sdk_defaults();
        other.storage_dir = Some("elsewhere".to_owned());
        assert!(Rendered::text_for(Some(&rendered), &Arc::new(other)).is_none());
    }
}
