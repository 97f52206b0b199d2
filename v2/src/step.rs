//! The steps of a PlanV2, one variant per step class of the SDK plus one for legacy steps.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::int;
use crate::plan::{JsonSchemaObject, PlanV2};
use crate::wire::{self, Nullable};
use planrun_wire::{serde_object, serde_tagged, serde_unit};

/// The SDK builder's default `tool_call_limit` of a ReAct agent step.
pub const DEFAULT_TOOL_CALL_LIMIT: i64 = 25;

/// One step of a plan, tagged by `type`. Every variant starts with `step_name`,
/// `conditional_block` and `loop_block`, as the SDK's base `StepV2` does.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(
    remote = "Self",
    tag = "type",
    rename_all = "snake_case",
    deny_unknown_fields
)]
#[schemars(rename = "StepV2")]
pub enum StepV2 {
    /// Calls one tool with fixed arguments (the SDK's `InvokeToolStep`).
    InvokeTool {
        /// The step's name, unique in the plan, used by `StepOutput` references.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The tool id.
        tool: String,
        /// The tool's arguments by name: literals or references.
        args: IndexMap<String, ArgValue>,
        /// JSON Schema the tool's output is coerced to, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<JsonSchemaObject>")]
        output_schema: Option<JsonSchemaObject>,
    },
    /// Asks an LLM to do a task (the SDK's `LLMStep`).
    Llm {
        /// The step's name, unique in the plan, used by `StepOutput` references.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The task text, template references such as `{{ Input(budget) }}` kept verbatim.
        task: String,
        /// Extra inputs handed to the LLM: references or literals.
        inputs: Vec<ArgValue>,
        /// JSON Schema of the structured output, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<JsonSchemaObject>")]
        output_schema: Option<JsonSchemaObject>,
        /// A system prompt replacing the default one, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        system_prompt: Option<String>,
        /// The model name, if the step overrides the configured one.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        model: Option<String>,
    },
    /// Lets an agent do a task with one tool (the SDK's `SingleToolAgentStep`).
    SingleToolAgent {
        /// The step's name, unique in the plan, used by `StepOutput` references.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The task text.
        task: String,
        /// The tool id.
        tool: String,
        /// Extra inputs handed to the agent: references or literals.
        inputs: Vec<ArgValue>,
        /// JSON Schema of the structured output, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<JsonSchemaObject>")]
        output_schema: Option<JsonSchemaObject>,
        /// The model name, if the step overrides the configured one.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        model: Option<String>,
    },
    /// Lets a ReAct agent do a task with several tools (the SDK's `ReActAgentStep`).
    ReactAgent {
        /// The step's name, unique in the plan, used by `StepOutput` references.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The task text.
        task: String,
        /// The tool ids the agent may call, in order.
        tools: Vec<String>,
        /// Extra inputs handed to the agent: references or literals.
        inputs: Vec<ArgValue>,
        /// JSON Schema of the structured output, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<JsonSchemaObject>")]
        output_schema: Option<JsonSchemaObject>,
        /// Maximum number of tool calls (the SDK builder's default is 25).
        #[serde(deserialize_with = "int::exact")]
        tool_call_limit: i64,
        /// Whether the agent may raise clarifications (the SDK builder's default is false).
        allow_agent_clarifications: bool,
        /// The model name, if the step overrides the configured one.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        model: Option<String>,
    },
    /// One clause of an if / else-if / else / end-if block (the SDK's `ConditionalStep`).
    Conditional {
        /// The step's name, unique in the plan, used by `StepOutput` references.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The condition: its text, or the name of the Python callable that computed it.
        condition: String,
        /// Arguments handed to the condition: literals or references.
        args: IndexMap<String, ArgValue>,
        /// Position of this clause within its block.
        #[serde(deserialize_with = "int::exact")]
        clause_index_in_block: i64,
        /// Which kind of clause this is.
        block_clause_type: BlockClauseType,
    },
    /// The start or end marker of a loop (the SDK's `LoopStep`).
    Loop {
        /// The step's name, unique in the plan, used by `StepOutput` references.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The loop condition (text or callable name); `null` for a for-each loop.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        condition: Option<String>,
        /// What a for-each loop iterates over: a reference, or a literal list.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ArgValue>")]
        over: Option<ArgValue>,
        /// The kind of loop.
        loop_type: LoopType,
        /// The current iteration index (the SDK's default is 0).
        #[serde(deserialize_with = "int::exact")]
        index: i64,
        /// Arguments handed to the condition: literals or references.
        args: IndexMap<String, ArgValue>,
        /// Whether this step opens or closes the loop.
        loop_step_type: LoopStepType,
    },
    /// Asks the user for input, optionally from a list of options (the SDK's `UserInputStep`).
    UserInput {
        /// The step's name, unique in the plan, used by `StepOutput` references.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The question shown to the user.
        message: String,
        /// The options of a multiple-choice question; `null` for free text.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<Vec<serde_json::Value>>")]
        options: Option<Vec<serde_json::Value>>,
    },
    /// Asks the user to confirm before the run goes on (the SDK's `UserVerifyStep`).
    UserVerify {
        /// The step's name, unique in the plan, used by `StepOutput` references.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The text the user is asked to confirm.
        message: String,
    },
    /// Ends the run early (the SDK's `ExitStep`).
    Exit {
        /// The step's name, unique in the plan, used by `StepOutput` references.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The exit message (the SDK's default is `""`).
        message: String,
        /// Whether the exit is an error, which fails the run.
        error: bool,
    },
    /// Runs a nested plan (the SDK's `SubPlanStep`).
    SubPlan {
        /// The step's name, unique in the plan, used by `StepOutput` references.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The nested plan.
        plan: Box<PlanV2>,
    },
    /// A planner-made legacy step that matches no Plan Builder pattern, kept verbatim.
    Legacy {
        /// The step's name; for a converted legacy step, the name the converter gave it.
        step_name: String,
        /// The conditional block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<ConditionalBlock>")]
        conditional_block: Option<ConditionalBlock>,
        /// The loop block the step sits in, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<LoopBlock>")]
        loop_block: Option<LoopBlock>,
        /// The legacy step's task text.
        task: String,
        /// The legacy step's input variables.
        inputs: Vec<LegacyVariable>,
        /// The legacy step's tool id, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        tool_id: Option<String>,
        /// The legacy step's output name, e.g. `$flights`.
        output: String,
        /// The legacy step's condition text, if any.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        condition: Option<String>,
    },
}

/// Expands to a `match` that binds one field present in every variant of [`StepV2`].
macro_rules! each_step {
    ($step:expr, $field:ident) => {
        match $step {
            StepV2::InvokeTool { $field, .. }
            | StepV2::Llm { $field, .. }
            | StepV2::SingleToolAgent { $field, .. }
            | StepV2::ReactAgent { $field, .. }
            | StepV2::Conditional { $field, .. }
            | StepV2::Loop { $field, .. }
            | StepV2::UserInput { $field, .. }
            | StepV2::UserVerify { $field, .. }
            | StepV2::Exit { $field, .. }
            | StepV2::SubPlan { $field, .. }
            | StepV2::Legacy { $field, .. } => $field,
        }
    };
}

impl StepV2 {
    /// The `type` tag this step is written with, e.g. `"react_agent"`.
    pub fn type_tag(&self) -> &'static str {
        match self {
            StepV2::InvokeTool { .. } => "invoke_tool",
            StepV2::Llm { .. } => "llm",
            StepV2::SingleToolAgent { .. } => "single_tool_agent",
            StepV2::ReactAgent { .. } => "react_agent",
            StepV2::Conditional { .. } => "conditional",
            StepV2::Loop { .. } => "loop",
            StepV2::UserInput { .. } => "user_input",
            StepV2::UserVerify { .. } => "user_verify",
            StepV2::Exit { .. } => "exit",
            StepV2::SubPlan { .. } => "sub_plan",
            StepV2::Legacy { .. } => "legacy",
        }
    }

    /// The step's name.
    pub fn step_name(&self) -> &str {
        each_step!(self, step_name)
    }

    /// The conditional block the step sits in, if any.
    pub fn conditional_block(&self) -> Option<&ConditionalBlock> {
        each_step!(self, conditional_block).as_ref()
    }

    /// The loop block the step sits in, if any.
    pub fn loop_block(&self) -> Option<&LoopBlock> {
        each_step!(self, loop_block).as_ref()
    }
}

/// A step argument or input: a literal value, or a reference resolved when the step runs.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(
    remote = "Self",
    tag = "kind",
    rename_all = "snake_case",
    deny_unknown_fields
)]
#[schemars(rename = "ArgValue")]
pub enum ArgValue {
    /// A literal JSON value.
    Literal {
        /// The value.
        value: serde_json::Value,
    },
    /// The output of an earlier step (the SDK's `StepOutput` reference).
    StepOutput {
        /// Which step: by index or by name.
        step: StepRef,
        /// A dot path into the output (`results.0.title`), if only part of it is wanted.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        path: Option<String>,
        /// Whether every recorded output of the step is wanted, as a list (for steps in a loop),
        /// rather than only the latest one.
        full: bool,
    },
    /// A plan input (the SDK's `Input` reference).
    Input {
        /// The input name.
        name: String,
        /// A dot path into the input (`address.street`), if only part of it is wanted.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        path: Option<String>,
    },
}

/// Which step a `StepOutput` reference points at, tagged by `by`. The SDK accepts a step index or
/// a step name; a tagged union keeps exactly one of the two, with no untagged guessing.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(
    remote = "Self",
    tag = "by",
    rename_all = "snake_case",
    deny_unknown_fields
)]
#[schemars(rename = "StepRef")]
pub enum StepRef {
    /// A step by its index in the plan.
    Index {
        /// The step index.
        #[serde(deserialize_with = "int::exact")]
        index: i64,
    },
    /// A step by its `step_name`.
    Name {
        /// The step name.
        name: String,
    },
}

/// The position of a step in a tree of conditional blocks.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "ConditionalBlock")]
pub struct ConditionalBlock {
    /// Indexes of the block's clause steps (if, else-if…, else, end-if).
    #[serde(deserialize_with = "int::list")]
    pub clause_step_indexes: Vec<i64>,
    /// The enclosing block; `null` for a root block.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<ConditionalBlock>")]
    pub parent_conditional_block: Option<Box<ConditionalBlock>>,
}

/// The position of a step in a loop.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "LoopBlock")]
pub struct LoopBlock {
    /// Index of the loop's start step.
    #[serde(deserialize_with = "int::exact")]
    pub start_step_index: i64,
    /// Index of the loop's end step; `null` while the loop is still open in the builder.
    #[serde(deserialize_with = "int::nullable")]
    #[schemars(with = "Nullable<i64>")]
    pub end_step_index: Option<i64>,
}

/// The kind of a conditional clause.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(remote = "Self", rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(rename = "BlockClauseType")]
pub enum BlockClauseType {
    /// The `if` clause that opens a block.
    NewConditionalBlock,
    /// An `else if` or `else` clause.
    AlternateClause,
    /// The `endif` that closes a block.
    EndConditionBlock,
}

/// The kind of a loop.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(remote = "Self", rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(rename = "LoopType")]
pub enum LoopType {
    /// Checks the condition before each iteration.
    While,
    /// Checks the condition after each iteration.
    DoWhile,
    /// Iterates over the items of `over`.
    ForEach,
}

/// Whether a loop step opens or closes its loop.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(remote = "Self", rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(rename = "LoopStepType")]
pub enum LoopStepType {
    /// The step that opens the loop.
    Start,
    /// The step that closes the loop.
    End,
}

/// An input variable of a legacy step, kept verbatim.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "LegacyVariable")]
pub struct LegacyVariable {
    /// The variable name: an earlier step's output (`$name`) or a plan input name.
    pub name: String,
    /// The variable description (`""` when the legacy file had none).
    pub description: String,
}

serde_object!(ConditionalBlock, LoopBlock, LegacyVariable);
serde_tagged!(StepV2 => "type", ArgValue => "kind", StepRef => "by");
serde_unit!(BlockClauseType, LoopType, LoopStepType);
