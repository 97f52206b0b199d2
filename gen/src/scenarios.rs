//! Scenarios: the plan templates (query, steps with their tools, outputs and conditions, plan
//! inputs) that plans are instantiated from, each with a weight so that common tasks come up
//! more often.

use crate::slots::Slot;

/// What a step's output looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A list of pydantic models, as `json.dumps` writes it (with spaces).
    Flights,
    /// One pydantic model, `model_dump_json()` (compact).
    Choice,
    /// A sentence or a dict.
    Weather,
    /// Text, an enum value or `""` (None).
    Booking,
    /// `""` (None) or a confirmation.
    Sent,
    /// An int, a float, `NaN` or an integer beyond 64 bits.
    Number,
    /// A float.
    Rate,
    /// `"true"` / `"false"`.
    Verdict,
    /// A list of dicts.
    Emails,
    /// A paragraph or two.
    Summary,
    /// Kilobytes of markdown (agent memory material from R2).
    Report,
    /// A list of dicts with urls and scores.
    Sources,
    /// A dict with a list of datetimes.
    Availability,
    /// An ISO datetime.
    Event,
    /// An ISO date.
    Date,
    /// Non-Latin text.
    Translation,
    /// An enum value.
    Status,
    /// A string that looks like JSON.
    JsonText,
    /// Tab-separated rows.
    Table,
    /// An int, sometimes beyond 64 bits.
    Count,
    /// A sentence.
    Answer,
    /// A list of strings.
    KeyPoints,
    /// Decoded bytes with control characters.
    File,
}

pub(crate) struct StepTpl {
    pub(crate) task: &'static str,
    pub(crate) tool: Option<&'static str>,
    pub(crate) output: &'static str,
    pub(crate) kind: Kind,
    /// Earlier steps whose outputs this one reads, with the variable description.
    pub(crate) uses: &'static [(usize, &'static str)],
    /// Constants the W1-era planner put in `Variable.value`.
    pub(crate) consts: &'static [(&'static str, Slot, &'static str)],
    pub(crate) condition: Option<&'static str>,
}

pub(crate) struct InputTpl {
    pub(crate) slot: Slot,
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    /// The step that reads it.
    pub(crate) step: usize,
}

pub(crate) struct Scenario {
    pub(crate) weight: u32,
    pub(crate) query: &'static str,
    pub(crate) steps: &'static [StepTpl],
    pub(crate) inputs: &'static [InputTpl],
}

const fn step(
    task: &'static str,
    tool: Option<&'static str>,
    output: &'static str,
    kind: Kind,
) -> StepTpl {
    StepTpl {
        task,
        tool,
        output,
        kind,
        uses: &[],
        consts: &[],
        condition: None,
    }
}

const fn input(slot: Slot, name: &'static str, description: &'static str, step: usize) -> InputTpl {
    InputTpl {
        slot,
        name,
        description,
        step,
    }
}

const LLM: Option<&str> = Some("llm_tool");

pub(crate) static SCENARIOS: &[Scenario] = &[
    Scenario {
        weight: 14,
        query:
            "Book me the cheapest flight from {origin} to {city} on {date} if the weather is good",
        steps: &[
            step(
                "Search flights from {origin} to {city} on {date}",
                Some("portia:search"),
                "$flights",
                Kind::Flights,
            ),
            step(
                "Get the weather in {city} on {date}",
                Some("weather_tool"),
                "$weather",
                Kind::Weather,
            ),
            StepTpl {
                uses: &[(0, "flights found"), (1, "forecast")],
                condition: Some("if $weather is sunny"),
                ..step(
                    "Pick the cheapest flight under {budget} EUR",
                    LLM,
                    "$choice",
                    Kind::Choice,
                )
            },
            StepTpl {
                uses: &[(2, "chosen flight")],
                condition: Some("if $choice is not empty"),
                ..step(
                    "Book the chosen flight and email the confirmation",
                    Some("portia:google:gmail:send_email"),
                    "$booking",
                    Kind::Booking,
                )
            },
        ],
        inputs: &[
            input(Slot::Origin, "$origin", "Origin city", 0),
            input(Slot::City, "$destination", "Destination city", 0),
            input(Slot::Date, "$departure_date", "Departure date", 0),
            input(Slot::Budget, "$budget", "Max price in EUR", 2),
        ],
    },
    Scenario {
        weight: 8,
        query: "What is {a} plus {b}?",
        steps: &[StepTpl {
            consts: &[
                ("$a", Slot::A, "first number"),
                ("$b", Slot::B, "second number"),
            ],
            ..step(
                "Add {a} and {b}",
                Some("calculator_tool"),
                "$result",
                Kind::Number,
            )
        }],
        inputs: &[
            input(Slot::A, "$a", "First number", 0),
            input(Slot::B, "$b", "Second number", 0),
        ],
    },
    Scenario {
        weight: 12,
        query: "Summarise my unread emails from {person} and draft a reply",
        steps: &[
            step(
                "Find unread emails from {person}",
                Some("portia:google:gmail:search_email"),
                "$emails",
                Kind::Emails,
            ),
            StepTpl {
                uses: &[(0, "the unread emails")],
                ..step(
                    "Summarise the emails in a few sentences",
                    LLM,
                    "$summary",
                    Kind::Summary,
                )
            },
            StepTpl {
                uses: &[(1, "summary of the thread")],
                ..step(
                    "Draft a polite reply to {person}",
                    LLM,
                    "$draft",
                    Kind::Summary,
                )
            },
        ],
        inputs: &[input(Slot::Person, "$sender", "Whose emails to read", 0)],
    },
    Scenario {
        weight: 11,
        query: "Research {topic} and write a short report with sources",
        steps: &[
            step(
                "Search the web for recent articles on {topic}",
                Some("portia:search"),
                "$sources",
                Kind::Sources,
            ),
            StepTpl {
                uses: &[(0, "articles found")],
                ..step(
                    "Read the five most relevant articles and take notes",
                    LLM,
                    "$notes",
                    Kind::Report,
                )
            },
            StepTpl {
                uses: &[(1, "notes")],
                ..step(
                    "Write a report on {topic} citing the sources",
                    LLM,
                    "$big_report",
                    Kind::Report,
                )
            },
            StepTpl {
                uses: &[(2, "the report")],
                ..step(
                    "List the key points of the report",
                    LLM,
                    "$key_points",
                    Kind::KeyPoints,
                )
            },
        ],
        inputs: &[input(Slot::Topic, "$topic", "Research topic", 0)],
    },
    Scenario {
        weight: 8,
        query: "Schedule a 30 minute meeting with {person} next {weekday}",
        steps: &[
            step(
                "Check {person}'s availability next {weekday}",
                Some("portia:google:gcalendar:check_availability"),
                "$availability",
                Kind::Availability,
            ),
            StepTpl {
                uses: &[(0, "free slots")],
                ..step(
                    "Create a 30 minute event in the first free slot",
                    Some("portia:google:gcalendar:create_event"),
                    "$event",
                    Kind::Event,
                )
            },
            StepTpl {
                uses: &[(1, "the event")],
                ..step(
                    "Email {person} the invitation",
                    Some("portia:google:gmail:send_email"),
                    "$invite_sent",
                    Kind::Sent,
                )
            },
        ],
        inputs: &[
            input(Slot::Person, "$attendee", "Who to meet", 0),
            input(Slot::Weekday, "$day", "Day of the week", 0),
        ],
    },
    Scenario {
        weight: 6,
        query: "Convert {amount} {currency} to EUR and tell me if it is over budget",
        steps: &[
            step(
                "Get today's {currency} to EUR exchange rate",
                Some("portia:search"),
                "$rate",
                Kind::Rate,
            ),
            StepTpl {
                uses: &[(0, "exchange rate")],
                consts: &[("$amount", Slot::Amount, "amount to convert")],
                ..step(
                    "Multiply {amount} by the rate",
                    Some("calculator_tool"),
                    "$converted",
                    Kind::Rate,
                )
            },
            StepTpl {
                uses: &[(1, "amount in EUR")],
                ..step(
                    "Compare the amount with the budget of {budget} EUR",
                    LLM,
                    "$over_budget",
                    Kind::Verdict,
                )
            },
        ],
        inputs: &[
            input(Slot::Amount, "$amount", "Amount", 0),
            input(Slot::Currency, "$currency", "Currency code", 0),
        ],
    },
    Scenario {
        weight: 5,
        query: "Star the GitHub repository {repo} and post it to #{channel}",
        steps: &[
            step(
                "Star {repo} on GitHub",
                Some("portia:github:repo:star"),
                "$starred",
                Kind::Status,
            ),
            StepTpl {
                uses: &[(0, "star result")],
                ..step(
                    "Post a message about {repo} to #{channel}",
                    Some("portia:slack:bot:send_message"),
                    "$message",
                    Kind::JsonText,
                )
            },
        ],
        inputs: &[
            input(Slot::Repo, "$repo", "owner/name", 0),
            input(Slot::Channel, "channel", "Slack channel", 1),
        ],
    },
    Scenario {
        weight: 7,
        query: "How many {things} did we sell in {month}?",
        steps: &[
            step(
                "Query the sales table for {things} sold in {month}",
                Some("portia:sql:query"),
                "$rows",
                Kind::Table,
            ),
            StepTpl {
                uses: &[(0, "sales rows")],
                ..step(
                    "Sum the units column",
                    Some("calculator_tool"),
                    "$total",
                    Kind::Count,
                )
            },
            StepTpl {
                uses: &[(1, "total units")],
                ..step(
                    "Answer the question in one sentence",
                    LLM,
                    "$answer",
                    Kind::Answer,
                )
            },
        ],
        inputs: &[input(Slot::Month, "$month", "Month to report on", 0)],
    },
    Scenario {
        weight: 5,
        query: "Translate our welcome message into {lang}",
        steps: &[step(
            "Translate the welcome message into {lang}",
            LLM,
            "$translation",
            Kind::Translation,
        )],
        inputs: &[input(Slot::Lang, "$language", "Target language", 0)],
    },
    Scenario {
        weight: 8,
        query: "Weather in {city}",
        steps: &[step(
            "Get weather",
            Some("weather_tool"),
            "$weather",
            Kind::Weather,
        )],
        inputs: &[input(Slot::City, "$city", "City", 0)],
    },
    Scenario {
        weight: 4,
        query: "When is {event} in {city} this year?",
        steps: &[
            step(
                "Search for the dates of {event} in {city}",
                Some("portia:search"),
                "$results",
                Kind::Sources,
            ),
            StepTpl {
                uses: &[(0, "search results")],
                ..step("Extract the start date", LLM, "$date", Kind::Date)
            },
        ],
        inputs: &[input(Slot::Event, "$event", "Event name", 0)],
    },
    Scenario {
        weight: 3,
        query: "Find the latest invoice from {vendor} and tell me the total",
        steps: &[
            step(
                "Find the most recent invoice from {vendor} in Drive",
                Some("portia:google:drive:search"),
                "$invoice",
                Kind::File,
            ),
            StepTpl {
                uses: &[(0, "the invoice file")],
                ..step("Read the invoice total", LLM, "$invoice_total", Kind::Rate)
            },
        ],
        inputs: &[input(Slot::Vendor, "$vendor", "Vendor name", 0)],
    },
    Scenario {
        weight: 1,
        query: "Say hello",
        steps: &[],
        inputs: &[],
    },
];
