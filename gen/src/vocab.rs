//! Vocabulary: the names, places, topics and phrases generated values are drawn from, with
//! unicode among them so that stores exercise non-ASCII text.

pub(crate) const ASCII_FIRST: &[&str] = &[
    "ada",
    "grace",
    "linus",
    "alan",
    "barbara",
    "ken",
    "margaret",
    "dennis",
    "katherine",
    "tim",
    "hedy",
    "edsger",
    "radia",
    "guido",
    "anita",
    "john",
];
pub(crate) const ASCII_LAST: &[&str] = &[
    "lovelace", "hopper", "torvalds", "turing", "liskov", "thompson", "hamilton", "ritchie",
    "johnson", "berners", "lamarr", "dijkstra", "perlman", "rossum", "borg", "mccarthy",
];
pub(crate) const UNICODE_HANDLES: &[&str] = &[
    "zoë",
    "józef",
    "renée",
    "søren",
    "東京",
    "müller",
    "ana-lúcia",
];
pub(crate) const PEOPLE: &[(&str, &str)] = &[
    ("Ana Silva", "ana.silva@example.com"),
    ("José Álvarez", "jose.alvarez@example.com"),
    ("Zoë Chen", "zoe.chen@example.com"),
    ("Grace Hopper", "grace@example.org"),
    ("Søren Kierkegaard", "soren@example.dk"),
    ("Amélie Dubois", "amelie.dubois@example.fr"),
    ("Kenji Watanabe", "kenji.watanabe@example.jp"),
    ("Oluwaseun Adeyemi", "seun@example.ng"),
];
pub(crate) const ORIGINS: &[&str] = &[
    "London",
    "Berlin",
    "New York",
    "São Paulo",
    "Zürich",
    "Kraków",
    "Toronto",
    "Madrid",
];
pub(crate) const CITIES: &[&str] = &[
    "Lisbon",
    "Porto",
    "Tokyo",
    "Reykjavík",
    "Montréal",
    "Barcelona",
    "Kyoto",
    "Edinburgh",
    "Zürich",
    "東京",
];
pub(crate) const TOPICS: &[&str] = &[
    "solid-state batteries",
    "EU AI Act compliance",
    "urban heat islands",
    "RISC-V adoption in data centres",
    "coral reef restoration",
    "four-day work weeks",
    "green hydrogen costs",
    "vector databases",
];
pub(crate) const WEEKDAYS: &[&str] = &["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"];
pub(crate) const CURRENCIES: &[&str] = &["USD", "GBP", "JPY", "CHF", "BRL", "SEK"];
pub(crate) const REPOS: &[&str] = &[
    "portiaAI/portia-sdk-python",
    "rust-lang/rust",
    "serde-rs/json",
    "tokio-rs/tokio",
    "pydantic/pydantic",
];
pub(crate) const CHANNELS: &[&str] =
    &["general", "eng-standup", "releases", "sales-emea", "random"];
pub(crate) const THINGS: &[&str] = &[
    "widgets",
    "annual subscriptions",
    "support tickets",
    "espresso machines",
    "e-bikes",
];
pub(crate) const MONTHS: &[&str] = &[
    "January 2025",
    "February 2025",
    "March 2025",
    "April 2025",
    "May 2025",
    "June 2025",
];
pub(crate) const LANGS: &[(&str, &str)] = &[
    (
        "Japanese",
        "ようこそ！ご登録いただきありがとうございます。最初のプロジェクトを作成しましょう。",
    ),
    (
        "Portuguese",
        "Bem-vindo! Obrigado por se registar. Vamos criar o seu primeiro projeto.",
    ),
    (
        "Greek",
        "Καλώς ήρθατε! Ευχαριστούμε για την εγγραφή σας. Ας δημιουργήσουμε το πρώτο σας έργο.",
    ),
    (
        "German",
        "Willkommen! Danke für Ihre Anmeldung. Lassen Sie uns Ihr erstes Projekt anlegen.",
    ),
    ("Arabic", "مرحبًا! شكرًا لتسجيلك. لننشئ مشروعك الأول."),
    (
        "Korean",
        "환영합니다! 가입해 주셔서 감사합니다. 첫 번째 프로젝트를 만들어 봅시다. 🚀",
    ),
];
pub(crate) const VENDORS: &[&str] = &[
    "ACME Ltd",
    "Globex",
    "Initech",
    "Umbrella Corp",
    "Stark Industries",
];
pub(crate) const EVENTS: &[&str] = &[
    "Web Summit",
    "PyCon",
    "RustConf",
    "the jazz festival",
    "the marathon",
];
pub(crate) const CARRIERS: &[(&str, &str, &str)] = &[
    ("TP", "TAP Air Portugal", "Star Alliance"),
    ("LH", "Lufthansa", "Star Alliance"),
    ("BA", "British Airways", "oneworld"),
    ("IB", "Iberia", "oneworld"),
    ("AF", "Air France", "SkyTeam"),
    ("U2", "easyJet", "none"),
];
pub(crate) const CONDITIONS: &[&str] = &[
    "sunny",
    "partly cloudy",
    "light rain",
    "overcast",
    "clear skies",
];
pub(crate) const SUBJECTS: &[&str] = &[
    "The report",
    "Our analysis",
    "The latest data",
    "Customer feedback",
    "The quarterly review",
    "The pilot programme",
    "Independent testing",
    "The vendor's roadmap",
    "Survey data",
    "The finance team",
];
pub(crate) const VERBS: &[&str] = &[
    "shows",
    "suggests",
    "confirms",
    "indicates",
    "highlights",
    "reveals",
    "notes",
    "points to",
];
pub(crate) const OBJECTS: &[&str] = &[
    "a steady increase in demand",
    "lower costs than expected",
    "a strong preference for shorter delivery times",
    "several open risks that need an owner",
    "room for improvement in onboarding",
    "a 12% rise in adoption",
    "consistent results across regions",
    "fewer support tickets per customer",
    "a clear gap between the two leading options",
    "that the current budget is sufficient",
];
pub(crate) const TAILS: &[&str] = &[
    "over the last quarter",
    "in most markets",
    "compared with 2024",
    "according to three independent sources",
    "despite supply constraints",
    "since the last release",
    "for the second month in a row",
    "once seasonal effects are removed",
];
pub(crate) const REGISTRY: &[&str] = &[
    "llm_tool",
    "weather_tool",
    "calculator_tool",
    "portia:search",
    "portia:google:gmail:send_email",
    "portia:google:gmail:search_email",
    "portia:google:gcalendar:create_event",
    "portia:github:repo:star",
    "portia:slack:bot:send_message",
    "portia:google:drive:search",
];
pub(crate) const ERRORS: &[&str] = &[
    "ToolHardError: Could not connect to the weather API (HTTP 503)",
    "ToolSoftError: Rate limit exceeded, retry after 30 seconds",
    "InvalidPlanRunStateError: Plan run is not in a resumable state",
    "ToolHardError: 401 Unauthorized: the OAuth token has expired",
    "TimeoutError: Tool call exceeded 60 seconds",
    "ValueError: Could not parse the model output as JSON",
];
