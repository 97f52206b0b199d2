//! Clarifications: one of each category a version has (Argument, Input, Action, Multiple Choice,
//! Value Confirmation, User Verification, Custom), open or resolved, with the run reference and
//! the optional keys of the release that wrote it.

use indexmap::IndexMap;
use planrun_legacy::{
    stringify, Category, Clarification, ClarificationId, Prefix, PrefixedId, RunId, RunRefKey,
    Version::{self, R4, R6, W1},
};
use serde_json::Value;

use crate::output::object;
use crate::rng::{money, Rng};
use crate::vocab::{CURRENCIES, PEOPLE, REGISTRY, VENDORS};

const INPUTS: &[(&str, &str, &str)] = &[
    ("city", "Which city do you mean?", "Lisbon"),
    (
        "recipient",
        "Who should the email go to?",
        "ana.silva@example.com",
    ),
    ("date", "Which date should I use?", "2025-06-01"),
    (
        "repository",
        "Which repository do you mean?",
        "portiaAI/portia-sdk-python",
    ),
    (
        "channel",
        "Which Slack channel should I post to?",
        "#eng-standup",
    ),
    ("amount", "How much should I transfer?", "250"),
    ("ciudad", "¿A qué ciudad quieres viajar?", "Málaga"),
];
const ACTIONS: &[(&str, &str)] = &[
    (
        "Please authenticate with Google",
        "https://accounts.google.com/o/oauth2/auth?response_type=code&client_id=portia&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fgmail.send&state=",
    ),
    (
        "Please authorise Portia to access your GitHub account",
        "https://github.com/login/oauth/authorize?client_id=Iv1.portia&scope=public_repo&state=",
    ),
    (
        "Connect your Slack workspace",
        "https://slack.com/oauth/v2/authorize?client_id=portia&scope=chat%3Awrite&state=",
    ),
    (
        "Sign in to Microsoft to continue",
        "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=portia&state=",
    ),
];

fn options(rng: &mut Rng) -> (&'static str, &'static str, Vec<Value>) {
    match rng.below(4) {
        0 => (
            "airport",
            "Which airport do you want to fly from?",
            vec!["LHR".into(), "LGW".into(), "STN".into(), "LCY".into()],
        ),
        1 => (
            "calendar",
            "Which calendar should the meeting go in?",
            vec!["Work".into(), "Personal".into(), "Team Offsite 🏝️".into()],
        ),
        2 => (
            "contact",
            "Which Ana did you mean?",
            vec![
                object(vec![
                    ("name", "Ana Silva".into()),
                    ("email", "ana.silva@example.com".into()),
                ]),
                object(vec![
                    ("name", "Ana Souza".into()),
                    ("email", "ana.souza@example.com.br".into()),
                ]),
            ],
        ),
        _ => (
            "seats",
            "How many seats should I book?",
            vec![1.into(), 2.into(), 3.into(), 4.into()],
        ),
    }
}

pub(crate) struct ClarificationCtx {
    pub(crate) version: Version,
    pub(crate) late_r6: bool,
    pub(crate) run: RunId,
}

pub(crate) fn clarification(
    ctx: &ClarificationCtx,
    rng: &mut Rng,
    category: Category,
    step: Option<i64>,
    resolved: bool,
) -> Clarification {
    let version = ctx.version;
    let run_ref = if version == W1 {
        (RunRefKey::WorkflowId, Some(ctx.run))
    } else if ctx.late_r6 && rng.chance(0.03) {
        // plan_run_id is optional from v0.7.0.
        (RunRefKey::PlanRunId, None)
    } else if rng.chance(0.02) {
        // A clarification raised for another run (the SDK does not check).
        let other = RunId(PrefixedId::new(version.run_prefix(), rng.uuid()));
        (RunRefKey::PlanRunId, Some(other))
    } else {
        (RunRefKey::PlanRunId, Some(ctx.run))
    };
    let mut fields: IndexMap<String, Value> = IndexMap::new();
    let (guidance, response) = match category {
        Category::Argument => {
            let (_, guidance, answer) = *rng.pick(INPUTS);
            (
                guidance.to_owned(),
                if resolved { answer.into() } else { Value::Null },
            )
        }
        Category::Input => {
            let (argument, guidance, answer) = *rng.pick(INPUTS);
            fields.insert("argument_name".into(), argument.into());
            (
                guidance.to_owned(),
                if resolved { answer.into() } else { Value::Null },
            )
        }
        Category::Action => action(rng, resolved, version, &mut fields),
        Category::MultipleChoice => {
            let (argument, guidance, options) = options(rng);
            let response = if resolved {
                rng.pick(&options).clone()
            } else {
                Value::Null
            };
            fields.insert("argument_name".into(), argument.into());
            fields.insert("options".into(), Value::Array(options));
            (guidance.to_owned(), response)
        }
        Category::ValueConfirmation => value_confirmation(rng, resolved, &mut fields),
        Category::UserVerification => {
            let guidance = format!(
                "Do you approve sending this email to {}?",
                rng.pick(PEOPLE).1
            );
            (
                guidance,
                if resolved {
                    rng.chance(0.8).into()
                } else {
                    Value::Null
                },
            )
        }
        Category::Custom => custom(rng, resolved, &mut fields),
    };
    let source = (version == R6 && ctx.late_r6).then(|| match rng.weighted(&[50, 20, 10, 20]) {
        0 => Some("default_execution_agent".to_owned()),
        1 => Some((*rng.pick(REGISTRY)).to_owned()),
        2 => Some("execution_hooks".to_owned()),
        _ => None,
    });
    Clarification {
        id: Some(ClarificationId(PrefixedId::new(Prefix::Clar, rng.uuid()))),
        run_ref: Some(run_ref),
        category,
        response,
        step: if category == Category::Custom && rng.chance(0.3) {
            None
        } else {
            step
        },
        user_guidance: guidance,
        resolved,
        source,
        fields,
        extra: IndexMap::new(),
    }
}

/// An action clarification: the URL to visit, and (from R4) whether to confirm.
fn action(
    rng: &mut Rng,
    resolved: bool,
    version: Version,
    fields: &mut IndexMap<String, Value>,
) -> (String, Value) {
    let (guidance, url) = *rng.pick(ACTIONS);
    fields.insert("action_url".into(), format!("{url}{}", rng.hex(32)).into());
    if version >= R4 {
        fields.insert("require_confirmation".into(), rng.chance(0.25).into());
    }
    let response = if resolved && rng.chance(0.6) {
        Value::Bool(true)
    } else {
        Value::Null
    };
    (guidance.to_owned(), response)
}

/// A value confirmation: a transfer's amount to confirm.
fn value_confirmation(
    rng: &mut Rng,
    resolved: bool,
    fields: &mut IndexMap<String, Value>,
) -> (String, Value) {
    let amount = money(rng, 10, 2000);
    let guidance = format!(
        "Confirm transfer of {} EUR to {}?",
        stringify(amount.clone()),
        rng.pick(VENDORS)
    );
    fields.insert("argument_name".into(), "amount".into());
    let response = match (resolved, rng.below(3)) {
        (false, _) => Value::Null,
        (true, 0) => amount,
        (true, n) => Value::Bool(n == 1),
    };
    (guidance, response)
}

/// A custom clarification: a named kind with nested data.
fn custom(rng: &mut Rng, resolved: bool, fields: &mut IndexMap<String, Value>) -> (String, Value) {
    let (name, guidance) = *rng.pick(&[
        ("payment_approval", "Approve the payment in the banking app"),
        (
            "document_review",
            "Review the contract draft before it is sent",
        ),
        ("two_factor", "Enter the code sent to your phone"),
    ]);
    fields.insert("name".into(), name.into());
    let data = object(vec![
        ("amount", money(rng, 5, 5000)),
        ("currency", (*rng.pick(CURRENCIES)).into()),
        ("reference", rng.hex(10).into()),
        (
            "nested",
            object(vec![
                (
                    "ids",
                    Value::from(vec![rng.between(1, 99), rng.between(100, 999)]),
                ),
                ("note", Value::Null),
            ]),
        ),
    ]);
    fields.insert("data".into(), data);
    let response = if resolved {
        object(vec![("approved", rng.chance(0.85).into())])
    } else {
        Value::Null
    };
    (guidance.to_owned(), response)
}
