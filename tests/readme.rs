//! The README tells the truth: its table reference is the schema crate's.

use crate::util::root;

#[test]
fn readme_table_reference_matches_the_schemas() {
    let path = root().join("README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let begin = text.find("<!-- tables:begin").expect("README has a tables:begin marker");
    let begin = begin + text[begin..].find("-->").unwrap() + 3;
    let end = text.find("<!-- tables:end -->").expect("README has a tables:end marker");
    let want = format!("\n\n{}", spade_schema::markdown());
    if std::env::var("SPADE_UPDATE_README").is_ok() {
        let new = format!("{}{}{}", &text[..begin], want, &text[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert_eq!(&text[begin..end], want, "README table reference is stale: run SPADE_UPDATE_README=1 cargo test readme");
}
