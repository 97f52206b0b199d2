//! One test per rule: a pair of schemas that fires it (with the expected direction) and a
//! close pair that does not.

use serde_json::{json, Value};

use super::*;

fn rules(old: &Value, new: &Value) -> Vec<Rule> {
    compare(old, new).into_iter().map(|f| f.rule).collect()
}

/// `rule` fires on (old, new), with this verdict; and does not fire on (old, quiet).
#[track_caller]
fn check(rule: Rule, old: Value, new: Value, verdict: Compatibility, quiet: Value) {
    let findings = compare(&old, &new);
    assert!(
        findings.iter().any(|f| f.rule == rule),
        "{rule} did not fire on\n{old}\n{new}\n{findings:#?}"
    );
    assert_eq!(Compatibility::of(&findings), verdict, "{findings:#?}");
    let quiet_rules = rules(&old, &quiet);
    assert!(
        !quiet_rules.contains(&rule),
        "{rule} fired on\n{old}\n{quiet}\n{quiet_rules:?}"
    );
}

fn object(props: Value, required: &[&str], additional: Value) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": additional})
}

#[test]
fn identical_schemas_are_full_and_annotations_are_ignored() {
    let old = object(
        json!({"a": {"type": "string", "description": "A."}}),
        &["a"],
        json!(false),
    );
    let new = object(
        json!({"a": {"type": "string", "description": "Changed.", "title": "A"}}),
        &["a"],
        json!(false),
    );
    assert!(compare(&old, &new).is_empty());
    assert_eq!(Compatibility::of(&compare(&old, &new)), Compatibility::Full);
}

#[test]
fn schema_narrowed_and_widened() {
    check(
        Rule::SchemaNarrowed,
        json!({"properties": {"a": true}}),
        json!({"properties": {"a": false}}),
        Compatibility::Forward,
        json!({"properties": {"a": {}}}),
    );
    check(
        Rule::SchemaWidened,
        json!({"properties": {"a": false}}),
        json!({"properties": {"a": true}}),
        Compatibility::Backward,
        json!({"properties": {"a": false}}),
    );
}

#[test]
fn property_removed_from_a_closed_object_breaks_backward() {
    let old = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &["a"],
        json!(false),
    );
    let new = object(json!({"a": {"type": "string"}}), &["a"], json!(false));
    let kept = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &["a"],
        json!(false),
    );
    check(
        Rule::PropertyRemoved,
        old,
        new,
        Compatibility::Forward,
        kept,
    );
}

#[test]
fn property_removed_from_an_open_object_breaks_forward() {
    let old = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &[],
        json!(true),
    );
    let new = object(json!({"a": {"type": "string"}}), &[], json!(true));
    let kept = old.clone();
    check(
        Rule::PropertyRemoved,
        old,
        new,
        Compatibility::Backward,
        kept,
    );
}

#[test]
fn a_removed_required_property_breaks_both_ways() {
    let old = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &["a", "b"],
        json!(false),
    );
    let new = object(json!({"a": {"type": "string"}}), &["a"], json!(false));
    let findings = compare(&old, &new);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].path, "/b");
    assert_eq!(findings[0].old, "/properties/b");
    assert_eq!(Compatibility::of(&findings), Compatibility::Breaking);
}

#[test]
fn optional_property_added_to_a_closed_object_breaks_forward() {
    let old = object(json!({"a": {"type": "string"}}), &["a"], json!(false));
    let new = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &["a"],
        json!(false),
    );
    check(
        Rule::PropertyAdded,
        old.clone(),
        new,
        Compatibility::Backward,
        old,
    );
}

#[test]
fn optional_property_added_to_an_open_object_breaks_backward_unless_unconstrained() {
    let old = object(json!({"a": {"type": "string"}}), &[], json!(true));
    let new = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &[],
        json!(true),
    );
    let unconstrained = object(
        json!({"a": {"type": "string"}, "b": {"description": "anything"}}),
        &[],
        json!(true),
    );
    check(
        Rule::PropertyAdded,
        old,
        new,
        Compatibility::Forward,
        unconstrained,
    );
}

#[test]
fn required_property_added() {
    let old = object(json!({"a": {"type": "string"}}), &["a"], json!(false));
    let new = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &["a", "b"],
        json!(false),
    );
    let optional = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &["a"],
        json!(false),
    );
    check(
        Rule::RequiredPropertyAdded,
        old,
        new,
        Compatibility::Breaking,
        optional,
    );
}

#[test]
fn property_made_required() {
    let old = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &["a"],
        json!(false),
    );
    let new = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &["a", "b"],
        json!(false),
    );
    check(
        Rule::PropertyMadeRequired,
        old.clone(),
        new,
        Compatibility::Forward,
        old,
    );
}

#[test]
fn property_made_optional() {
    let old = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &["a", "b"],
        json!(false),
    );
    let new = object(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        &["a"],
        json!(false),
    );
    check(
        Rule::PropertyMadeOptional,
        old.clone(),
        new,
        Compatibility::Backward,
        old,
    );
}

#[test]
fn type_narrowed() {
    check(
        Rule::TypeNarrowed,
        json!({"type": ["string", "null"]}),
        json!({"type": "string"}),
        Compatibility::Forward,
        json!({"type": ["null", "string"]}),
    );
    check(
        Rule::TypeNarrowed,
        json!({"type": "number"}),
        json!({"type": "integer"}),
        Compatibility::Forward,
        json!({"type": "number"}),
    );
}

#[test]
fn type_widened() {
    check(
        Rule::TypeWidened,
        json!({"type": "integer"}),
        json!({"type": "number"}),
        Compatibility::Backward,
        json!({"type": "integer"}),
    );
    check(
        Rule::TypeWidened,
        json!({"type": "string"}),
        json!({"type": ["string", "null"]}),
        Compatibility::Backward,
        json!({"type": "string"}),
    );
    let both = rules(&json!({"type": "string"}), &json!({"type": "integer"}));
    assert!(
        both.contains(&Rule::TypeNarrowed) && both.contains(&Rule::TypeWidened),
        "{both:?}"
    );
}

#[test]
fn enum_value_removed_and_added() {
    let abc = json!({"type": "string", "enum": ["a", "b", "c"]});
    check(
        Rule::EnumValueRemoved,
        abc.clone(),
        json!({"type": "string", "enum": ["a", "b"]}),
        Compatibility::Forward,
        json!({"type": "string", "enum": ["c", "b", "a"]}),
    );
    check(
        Rule::EnumValueAdded,
        abc.clone(),
        json!({"type": "string", "enum": ["a", "b", "c", "d"]}),
        Compatibility::Backward,
        abc,
    );
}

#[test]
fn enums_written_as_a_oneof_of_consts_compare_as_values() {
    let old = json!({"oneOf": [
        {"type": "string", "const": "DISK", "description": "Disk."},
        {"type": "string", "const": "CLOUD", "description": "Cloud."}
    ]});
    let removed = json!({"oneOf": [{"type": "string", "const": "DISK"}]});
    let as_enum = json!({"type": "string", "enum": ["CLOUD", "DISK"]});
    check(
        Rule::EnumValueRemoved,
        old.clone(),
        removed,
        Compatibility::Forward,
        as_enum.clone(),
    );
    assert!(
        compare(&old, &as_enum).is_empty(),
        "{:#?}",
        compare(&old, &as_enum)
    );
    let added = json!({"oneOf": [
        {"type": "string", "const": "DISK"}, {"type": "string", "const": "CLOUD"}, {"type": "string", "const": "MEMORY"}
    ]});
    check(
        Rule::EnumValueAdded,
        old.clone(),
        added,
        Compatibility::Backward,
        old,
    );
}

#[test]
fn an_enum_written_as_consts_against_a_plain_type() {
    let consts =
        json!({"oneOf": [{"type": "string", "const": "A"}, {"type": "string", "const": "B"}]});
    let free = json!({"type": "string"});
    let findings = compare(&consts, &free);
    assert_eq!(
        findings.iter().map(|f| f.rule).collect::<Vec<_>>(),
        vec![Rule::EnumDropped],
        "{findings:#?}"
    );
    assert_eq!(Compatibility::of(&findings), Compatibility::Backward);
    let findings = compare(&free, &consts);
    assert_eq!(
        findings.iter().map(|f| f.rule).collect::<Vec<_>>(),
        vec![Rule::EnumIntroduced],
        "{findings:#?}"
    );
    assert_eq!(Compatibility::of(&findings), Compatibility::Forward);
    let numbers = json!({"type": "integer"});
    let rules = rules(&consts, &numbers);
    assert_eq!(
        rules,
        vec![
            Rule::EnumDropped,
            Rule::EnumValueRemoved,
            Rule::EnumValueRemoved
        ]
    );
}

#[test]
fn enum_introduced_and_dropped() {
    let free = json!({"type": "string"});
    let closed = json!({"type": "string", "enum": ["a"]});
    check(
        Rule::EnumIntroduced,
        free.clone(),
        closed.clone(),
        Compatibility::Forward,
        free.clone(),
    );
    check(
        Rule::EnumDropped,
        closed.clone(),
        free,
        Compatibility::Backward,
        closed,
    );
}

fn tagged(tag: &str, extra: Value) -> Value {
    let mut props = json!({"kind": {"type": "string", "const": tag}});
    props
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let required: Vec<&String> = props.as_object().unwrap().keys().collect();
    json!({"type": "object", "additionalProperties": false, "properties": props, "required": required})
}

#[test]
fn tag_const_changed() {
    let old = json!({"oneOf": [tagged("local", json!({"value": {}})), tagged("remote", json!({"url": {"type": "string"}}))]});
    let renamed = json!({"oneOf": [tagged("local", json!({"value": {}})), tagged("far", json!({"url": {"type": "string"}}))]});
    let reordered = json!({"oneOf": [tagged("remote", json!({"url": {"type": "string"}})), tagged("local", json!({"value": {}}))]});
    check(
        Rule::TagConstChanged,
        old.clone(),
        renamed,
        Compatibility::Breaking,
        reordered.clone(),
    );
    assert!(
        compare(&old, &reordered).is_empty(),
        "{:#?}",
        compare(&old, &reordered)
    );
}

#[test]
fn const_changed() {
    check(
        Rule::ConstChanged,
        json!({"const": 1}),
        json!({"const": 2}),
        Compatibility::Breaking,
        json!({"const": 1}),
    );
}

#[test]
fn pattern_added_removed_changed() {
    let free = json!({"type": "string"});
    let id = json!({"type": "string", "pattern": "^prun-[0-9a-f]+$"});
    check(
        Rule::PatternAdded,
        free.clone(),
        id.clone(),
        Compatibility::Forward,
        free.clone(),
    );
    check(
        Rule::PatternRemoved,
        id.clone(),
        free,
        Compatibility::Backward,
        id.clone(),
    );
    check(
        Rule::PatternChanged,
        id.clone(),
        json!({"type": "string", "pattern": "^run-[0-9a-f]+$"}),
        Compatibility::Breaking,
        id,
    );
}

#[test]
fn format_added_removed_changed() {
    let free = json!({"type": "integer"});
    let int64 = json!({"type": "integer", "format": "int64"});
    check(
        Rule::FormatAdded,
        free.clone(),
        int64.clone(),
        Compatibility::Forward,
        free.clone(),
    );
    check(
        Rule::FormatRemoved,
        int64.clone(),
        free,
        Compatibility::Backward,
        int64.clone(),
    );
    check(
        Rule::FormatChanged,
        int64.clone(),
        json!({"type": "integer", "format": "int32"}),
        Compatibility::Breaking,
        int64,
    );
}

#[test]
fn additional_properties_tightened_and_loosened() {
    let open = json!({"type": "object", "additionalProperties": true});
    let closed = json!({"type": "object", "additionalProperties": false});
    let strings = json!({"type": "object", "additionalProperties": {"type": "string"}});
    let implicit = json!({"type": "object", "properties": {}});
    check(
        Rule::AdditionalPropertiesTightened,
        open.clone(),
        closed.clone(),
        Compatibility::Forward,
        implicit,
    );
    check(
        Rule::AdditionalPropertiesTightened,
        open.clone(),
        strings.clone(),
        Compatibility::Forward,
        open.clone(),
    );
    check(
        Rule::AdditionalPropertiesLoosened,
        closed.clone(),
        open,
        Compatibility::Backward,
        closed.clone(),
    );
    check(
        Rule::AdditionalPropertiesLoosened,
        closed,
        strings.clone(),
        Compatibility::Backward,
        json!({"type": "object", "additionalProperties": false, "required": []}),
    );
    // Map values are compared as schemas.
    let nullable = json!({"type": "object", "additionalProperties": {"type": ["string", "null"]}});
    assert_eq!(rules(&strings, &nullable), vec![Rule::TypeWidened]);
    assert_eq!(compare(&strings, &nullable)[0].path, "/*");
}

#[test]
fn oneof_branch_removed_and_added() {
    let a = tagged("a", json!({}));
    let b = tagged("b", json!({"x": {"type": "integer"}}));
    let c = tagged("c", json!({"y": {"type": "string"}}));
    let ab = json!({"oneOf": [a.clone(), b.clone()]});
    let abc = json!({"oneOf": [a.clone(), b.clone(), c.clone()]});
    let ba = json!({"oneOf": [b, a]});
    check(
        Rule::OneOfBranchRemoved,
        abc.clone(),
        ab.clone(),
        Compatibility::Forward,
        abc.clone(),
    );
    check(
        Rule::OneOfBranchAdded,
        ab.clone(),
        abc,
        Compatibility::Backward,
        ba,
    );
}

#[test]
fn anyof_branch_removed_and_added_nullable() {
    let defs = json!({"Out": {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"], "additionalProperties": false}});
    let plain = json!({"$defs": defs, "type": "object", "properties": {"o": {"$ref": "#/$defs/Out"}}, "required": ["o"]});
    let nullable = json!({"$defs": defs, "type": "object", "properties": {"o": {"anyOf": [{"$ref": "#/$defs/Out"}, {"type": "null"}]}}, "required": ["o"]});
    check(
        Rule::AnyOfBranchAdded,
        plain.clone(),
        nullable.clone(),
        Compatibility::Backward,
        plain.clone(),
    );
    check(
        Rule::AnyOfBranchRemoved,
        nullable.clone(),
        plain,
        Compatibility::Forward,
        nullable.clone(),
    );
    let findings = compare(
        &nullable,
        &json!({"$defs": defs, "type": "object", "properties": {"o": {"$ref": "#/$defs/Out"}}, "required": ["o"]}),
    );
    assert_eq!(findings[0].path, "/o");
    assert_eq!(findings[0].old, "/properties/o/anyOf/1");
}

#[test]
fn range_narrowed_and_widened() {
    let base = json!({"type": "integer", "minimum": 0, "maximum": 10});
    check(
        Rule::RangeNarrowed,
        base.clone(),
        json!({"type": "integer", "minimum": 1, "maximum": 10}),
        Compatibility::Forward,
        base.clone(),
    );
    check(
        Rule::RangeNarrowed,
        json!({"type": "string"}),
        json!({"type": "string", "maxLength": 5}),
        Compatibility::Forward,
        json!({"type": "string"}),
    );
    check(
        Rule::RangeWidened,
        base.clone(),
        json!({"type": "integer", "minimum": 0, "maximum": 11}),
        Compatibility::Backward,
        base.clone(),
    );
    check(
        Rule::RangeWidened,
        base.clone(),
        json!({"type": "integer", "maximum": 10}),
        Compatibility::Backward,
        base,
    );
}

#[test]
fn unique_items_added_and_removed() {
    let list = json!({"type": "array", "items": {"type": "string"}});
    let set = json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true});
    check(
        Rule::UniqueItemsAdded,
        list.clone(),
        set.clone(),
        Compatibility::Forward,
        list.clone(),
    );
    check(
        Rule::UniqueItemsRemoved,
        set.clone(),
        list,
        Compatibility::Backward,
        set,
    );
}

#[test]
fn items_are_compared_and_refs_followed_through_cycles() {
    let old = json!({
        "$defs": {"Node": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}, "required": ["name", "children"], "additionalProperties": false}},
        "$ref": "#/$defs/Node"
    });
    let mut new = old.clone();
    new["$defs"]["Node"]["properties"]["name"]["pattern"] = json!("^[a-z]+$");
    let findings = compare(&old, &new);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].rule, Rule::PatternAdded);
    assert_eq!(findings[0].path, "/name");
    assert_eq!(findings[0].new, "/$defs/Node/properties/name/pattern");
    assert!(compare(&old, &old).is_empty());
}

#[test]
fn ref_changed() {
    let old = json!({"$ref": "https://example.com/a.json"});
    let new = json!({"$ref": "https://example.com/b.json"});
    check(
        Rule::RefChanged,
        old.clone(),
        new,
        Compatibility::Breaking,
        old,
    );
}

#[test]
fn keyword_changed_for_unmodelled_keywords() {
    let old = json!({"type": "string", "not": {"const": "x"}});
    let new = json!({"type": "string", "not": {"const": "y"}});
    let reannotated = json!({"type": "string", "not": {"const": "x", "description": "no x"}});
    check(
        Rule::KeywordChanged,
        old,
        new,
        Compatibility::Breaking,
        reannotated,
    );
}

#[test]
fn a_property_named_like_an_annotation_is_a_property() {
    let old = object(
        json!({"description": {"type": "string"}}),
        &["description"],
        json!(false),
    );
    let new = object(
        json!({"description": {"type": "integer"}}),
        &["description"],
        json!(false),
    );
    let found = rules(&old, &new);
    assert!(
        found.contains(&Rule::TypeNarrowed) && found.contains(&Rule::TypeWidened),
        "{found:?}"
    );
}

#[test]
fn schema_sets_are_matched_by_name() {
    let a = json!({"type": "string"});
    let old = vec![
        ("v2/A.schema.json".to_owned(), a.clone()),
        ("v2/Gone.schema.json".to_owned(), a.clone()),
    ];
    let new = vec![
        ("v2/A.schema.json".to_owned(), a.clone()),
        ("v2/New.schema.json".to_owned(), a),
    ];
    let report = compare_sets(&old, &new);
    assert_eq!(report.files.len(), 3);
    assert_eq!(report.verdict, Compatibility::Forward);
    let rules: Vec<Rule> = report.findings().map(|(_, f)| f.rule).collect();
    assert_eq!(rules, vec![Rule::SchemaRemoved, Rule::SchemaAdded]);
    let text = report.to_text();
    assert!(
        text.contains("v2/A.schema.json: FULL (no change)"),
        "{text}"
    );
    assert!(text.ends_with("verdict: FORWARD\n"), "{text}");
}

#[test]
fn verdicts_meet_requirements() {
    use Compatibility::*;
    use Requirement as R;
    assert!(Full.satisfies(R::Backward) && Full.satisfies(R::Forward) && Full.satisfies(R::Full));
    assert!(
        Backward.satisfies(R::Backward)
            && !Backward.satisfies(R::Forward)
            && !Backward.satisfies(R::Full)
    );
    assert!(Forward.satisfies(R::Forward) && !Forward.satisfies(R::Backward));
    assert!(!Breaking.satisfies(R::Backward) && !Breaking.satisfies(R::Forward));
}

#[test]
fn every_rule_has_a_unique_kebab_case_id() {
    let mut ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
    assert!(ids
        .iter()
        .all(|id| id.chars().all(|c| c.is_ascii_lowercase() || c == '-')));
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), Rule::ALL.len());
}

/// The published V2 schemas against themselves, and against a few hand-made edits that a
/// careless change to the Rust types would produce.
#[test]
fn published_v2_schemas_under_realistic_edits() {
    let (_, run) = planrun_v2::schemas().into_iter().next().unwrap();
    assert!(compare(&run, &run).is_empty());

    let mut renamed = run.clone();
    let props = renamed["properties"].as_object_mut().unwrap();
    let value = props.shift_remove("current_step_index").unwrap();
    props.insert("current_step".to_owned(), value);
    let required = renamed["required"].as_array_mut().unwrap();
    required.retain(|r| r != "current_step_index");
    required.push(json!("current_step"));
    let found = rules(&run, &renamed);
    assert!(
        found.contains(&Rule::PropertyRemoved) && found.contains(&Rule::RequiredPropertyAdded),
        "{found:?}"
    );
    assert_eq!(
        Compatibility::of(&compare(&run, &renamed)),
        Compatibility::Breaking
    );

    let mut nullable_plan = run.clone();
    nullable_plan["properties"]["plan"] =
        json!({"anyOf": [{"$ref": "#/$defs/PlanV2"}, {"type": "null"}]});
    let findings = compare(&run, &nullable_plan);
    assert_eq!(
        findings.iter().map(|f| f.rule).collect::<Vec<_>>(),
        vec![Rule::AnyOfBranchAdded],
        "{findings:#?}"
    );
    assert_eq!(Compatibility::of(&findings), Compatibility::Backward);

    let mut new_state = run.clone();
    new_state["$defs"]["PlanRunState"]["oneOf"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "string", "const": "PAUSED"}));
    let findings = compare(&run, &new_state);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].rule, Rule::EnumValueAdded);
    assert_eq!(findings[0].path, "/state");
}

/// Regression of a fuzzer finding: `$ref` cycles of different lengths on the two sides make a
/// chain of distinct schema pairs as long as the product of the cycle lengths, and the walk
/// recursed down all of it until the stack overflowed. It stops at a fixed depth now, with a
/// finding that breaks both ways (so swapping the sides mirrors it), and a schema compared with
/// itself still has none.
#[test]
fn ref_chains_deeper_than_the_walk_follows_end_in_a_finding() {
    let chain = |n: usize| {
        let defs: serde_json::Map<String, Value> = (0..n)
            .map(|i| {
                let next = format!("#/$defs/d{}", (i + 1) % n);
                (
                    format!("d{i}"),
                    json!({"type": "object", "properties": {"x": {"$ref": next}}}),
                )
            })
            .collect();
        json!({"$defs": defs, "$ref": "#/$defs/d0"})
    };
    let (old, new) = (chain(97), chain(89));
    for (a, b) in [(&old, &new), (&new, &old)] {
        let findings = compare(a, b);
        assert!(
            findings.iter().any(|f| f.rule == Rule::TooDeep),
            "{findings:?}"
        );
        assert_eq!(Compatibility::of(&findings), Compatibility::Breaking);
    }
    assert!(compare(&old, &old).is_empty());
}
