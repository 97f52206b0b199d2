//! Portia Cloud API bodies read as the stored documents they stand for, so that a run fetched from
//! Portia Cloud converts exactly like one from a disk store.
//!
//! A run GET response nests the plan (`plan: {id}`) and names the end user `end_user`; a run PUT
//! body has `plan_id` and `end_user` but no `id` (it is in the URL). A plan POST body flattens
//! the plan context (`query`, `tool_ids`).

use serde_json::{Map, Value};

use planrun_legacy::{parse, ParseError, Parsed};
use planrun_wire::json::to_sdk_json;

/// Why a cloud body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CloudError {
    /// The body has no run id and none was given (take it from the URL, see [`id_from_url`]).
    #[error("the cloud body has no `id`; pass the run id from the request URL")]
    MissingId,
    /// The body's id and the given one differ.
    #[error("the body's id {body} differs from the given id {given}")]
    IdMismatch {
        /// In the body.
        body: String,
        /// Given by the caller.
        given: String,
    },
    /// Not a JSON object, or `plan` is not `{ "id": … }`.
    #[error("not a cloud {0} body: {1}")]
    Shape(&'static str, String),
    /// The stored document it stands for does not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
}

/// The run or plan id at the end of a cloud API path: `/api/v0/plan-runs/<id>/` → `<id>`.
pub fn id_from_url(url: &str) -> Option<&str> {
    let last = url.trim_end_matches('/').rsplit('/').next()?;
    ["wkfl-", "pr-", "prun-", "plan-"]
        .iter()
        .any(|p| last.starts_with(p))
        .then_some(last)
}

/// Reads a run as the cloud API returns or receives it; `id` is the id from the URL, if known.
pub fn run_from_cloud(body: &Value, id: Option<&str>) -> Result<Parsed, CloudError> {
    let obj = body
        .as_object()
        .ok_or_else(|| CloudError::Shape("run", "expected an object".into()))?;
    let run_id = match (obj.get("id").and_then(Value::as_str), id) {
        (Some(body), Some(given)) if body != given => {
            return Err(CloudError::IdMismatch {
                body: body.into(),
                given: given.into(),
            })
        }
        (Some(id), _) | (None, Some(id)) => id.to_owned(),
        (None, None) => return Err(CloudError::MissingId),
    };
    let plan_id = match (obj.get("plan"), obj.get("plan_id")) {
        (Some(Value::Object(plan)), _) => plan
            .get("id")
            .cloned()
            .ok_or_else(|| CloudError::Shape("run", "`plan` has no `id`".into()))?,
        (None, Some(plan_id)) => plan_id.clone(),
        _ => {
            return Err(CloudError::Shape(
                "run",
                "expected `plan: {\"id\": …}` or `plan_id`".into(),
            ))
        }
    };
    let mut stored = Map::new();
    stored.insert("id".into(), Value::String(run_id));
    stored.insert("plan_id".into(), plan_id);
    for key in ["current_step_index", "state", "execution_context"] {
        if let Some(value) = obj.get(key) {
            stored.insert(key.into(), value.clone());
        }
    }
    if let Some(end_user) = obj.get("end_user") {
        stored.insert("end_user_id".into(), end_user.clone());
    }
    for key in ["outputs", "plan_run_inputs"] {
        if let Some(value) = obj.get(key) {
            stored.insert(key.into(), value.clone());
        }
    }
    let known = [
        "id",
        "plan",
        "plan_id",
        "current_step_index",
        "state",
        "execution_context",
        "end_user",
        "outputs",
        "plan_run_inputs",
    ];
    if let Some(other) = obj.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(CloudError::Shape(
            "run",
            format!("unexpected key {other:?}"),
        ));
    }
    Ok(parse(to_sdk_json(&Value::Object(stored)).as_bytes())?)
}

/// Reads a plan as the cloud API receives it (`POST /api/v0/plans/`) or returns it.
pub fn plan_from_cloud(body: &Value) -> Result<Parsed, CloudError> {
    let obj = body
        .as_object()
        .ok_or_else(|| CloudError::Shape("plan", "expected an object".into()))?;
    let mut stored = Map::new();
    if let Some(id) = obj.get("id") {
        stored.insert("id".into(), id.clone());
    }
    let mut context = Map::new();
    for key in ["query", "tool_ids"] {
        let value = obj
            .get(key)
            .ok_or_else(|| CloudError::Shape("plan", format!("missing `{key}`")))?;
        context.insert(key.into(), value.clone());
    }
    stored.insert("plan_context".into(), Value::Object(context));
    for key in ["steps", "inputs", "plan_inputs"] {
        if let Some(value) = obj.get(key) {
            stored.insert(key.into(), value.clone());
        }
    }
    Ok(parse(to_sdk_json(&Value::Object(stored)).as_bytes())?)
}
