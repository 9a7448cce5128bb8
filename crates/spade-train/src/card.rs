//! The model card every checkpoint folder carries (`README.md`, the Hugging Face model-card
//! format: YAML metadata, then Markdown), so a checkpoint can be pushed to a hub as it is and a
//! reader of the folder knows what made it: the base model, the stage, round and step, the data it
//! was trained on, that step's metrics and the stage's full configuration.

use serde_json::Value;

/// What the card says.
pub struct Card<'a> {
    /// The stage that wrote the checkpoint (`spade-grpo-step`, `spade-sft`).
    pub stage: &'a str,
    /// The model the step started from.
    pub model: &'a str,
    /// The run's initial model (the KL reference).
    pub initial_model: &'a str,
    /// The model the run's weights descend from (its hub id, when its `config.json` names one,
    /// becomes `base_model`).
    pub base: &'a str,
    /// Self-play round (`--round`).
    pub round: u64,
    /// Policy version of the weights in the folder.
    pub step: i64,
    /// Input tables, as given.
    pub data: Vec<(&'a str, String)>,
    /// The step's metrics (an object; scalars become a table, the rest JSON).
    pub metrics: Value,
    /// The stage's configuration (flags).
    pub config: Value,
}

/// A Hugging Face hub id for a local model, when its `config.json` names one (`_name_or_path`).
fn hub_id(model: &str) -> Option<String> {
    let dir = std::path::Path::new(model);
    let text = std::fs::read_to_string(dir.join("config.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let id = v.get("_name_or_path")?.as_str()?;
    let looks_like_hub = id.split('/').count() == 2 && !id.starts_with('/') && !id.starts_with('.') && !std::path::Path::new(id).exists();
    looks_like_hub.then(|| id.to_string())
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

fn scalar_rows(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                scalar_rows(&key, x, out);
            }
        }
        Value::Number(n) => out.push((prefix.to_string(), n.to_string())),
        Value::Bool(b) => out.push((prefix.to_string(), b.to_string())),
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        _ => {}
    }
}

/// The card as Markdown with YAML front matter.
pub fn render(c: &Card) -> String {
    let mut s = String::from("---\n");
    if let Some(id) = hub_id(c.base) {
        s += &format!("base_model: {}\n", yaml_str(&id));
    }
    s += "library_name: spade\npipeline_tag: text-generation\ntags:\n- spade\n- self-play\n- reinforcement-learning\n";
    s += &format!("- {}\n", c.stage);
    s += "---\n\n";
    s += &format!("# spade checkpoint: round {}, policy version {}\n\n", c.round, c.step);
    s += &format!(
        "Written by `{}` (spade {}) from `{}`. The run's initial model (the KL reference) is `{}`.\n\n",
        c.stage,
        env!("CARGO_PKG_VERSION"),
        c.model,
        c.initial_model
    );
    s += "SPADE: one model designs executable training environments and plays them with and without a privileged hint; \
          both roles learn with GRPO, the designer rewarded for environments at the edge of the agent's ability.\n\n";
    s += "## Training data\n\n";
    if c.data.is_empty() {
        s += "(none)\n";
    }
    for (k, v) in &c.data {
        s += &format!("- {k}: `{v}`\n");
    }
    s += "\n## Metrics of this step\n\n| metric | value |\n| --- | --- |\n";
    let mut rows = Vec::new();
    scalar_rows("", &c.metrics, &mut rows);
    for (k, v) in rows {
        s += &format!("| `{k}` | {} |\n", v.replace('|', "\\|"));
    }
    s += "\n## Configuration\n\n```json\n";
    s += &serde_json::to_string_pretty(&c.config).expect("JSON serialises");
    s += "\n```\n\nFiles: `config.json`, `model.safetensors`, `tokenizer.json` (Hugging Face layout), `optimizer.safetensors` and \
          `trainer_state.json` (spade's trainer state: `step` is the policy version).\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_has_front_matter_data_metrics_and_config() {
        let d = std::env::temp_dir().join(format!("spade-card-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("config.json"), r#"{"_name_or_path": "HuggingFaceTB/SmolLM2-135M-Instruct"}"#).unwrap();
        let card = Card {
            stage: "spade-grpo-step",
            model: "runs/x/round-0001/step-0/checkpoint",
            initial_model: "runs/x/warm",
            base: d.to_str().unwrap(),
            round: 2,
            step: 5,
            data: vec![("rollouts", "r.parquet".into())],
            metrics: serde_json::json!({"loss": 0.25, "agent": {"samples": 8}, "list": [1, 2]}),
            config: serde_json::json!({"lr": 1e-6}),
        };
        let text = render(&card);
        assert!(text.starts_with("---\nbase_model: \"HuggingFaceTB/SmolLM2-135M-Instruct\"\n"), "{text}");
        assert!(text.contains("# spade checkpoint: round 2, policy version 5"));
        assert!(text.contains("- rollouts: `r.parquet`"));
        assert!(text.contains("| `loss` | 0.25 |") && text.contains("| `agent.samples` | 8 |"), "{text}");
        assert!(text.contains("\"lr\": 1e-6") || text.contains("\"lr\": 0.000001"), "{text}");
        std::fs::remove_dir_all(&d).unwrap();
        // A model without a hub id: no base_model key.
        let text = render(&Card { base: "/nonexistent/model.gguf", ..card });
        assert!(!text.contains("base_model:"));
    }
}
