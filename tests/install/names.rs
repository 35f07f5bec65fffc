//! One repository and release named everywhere: every template and snippet a user copies names
//! Cargo.toml's repository and the Action's release tag, and every install line downloads then
//! runs and says the release is not published yet.

use super::*;

/// Every file a user copies from names this repository as Cargo.toml does, and the Action by this
/// release's tag; the templates that can say it once (a variable) say it once; the `with:` keys
/// given to the Action are its inputs.
#[test]
fn every_template_and_snippet_names_the_repository_and_release_of_cargo_toml() {
    let repo = repository();
    let tag = release_tag();
    let name = repo.split('/').nth(1).unwrap().to_owned();
    let mut files: Vec<PathBuf> = [
        "README.md",
        "action.yml",
        "scripts/install.sh",
        "scripts/action.sh",
    ]
    .iter()
    .map(|f| root().join(f))
    .collect();
    for dir in [
        "docs",
        "examples/workflows",
        "examples/gitlab",
        "examples/slurm",
        "examples/k8s",
    ] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                files.push(p);
            }
        }
    }
    let reference = regex_lite(&name);
    let mut wrong = Vec::new();
    let mut seen = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        if text.contains("<this repository>") {
            wrong.push(format!("{rel}: says `<this repository>`"));
        }
        for (owner_repo, after) in reference(&text) {
            seen += 1;
            if owner_repo != repo {
                wrong.push(format!("{rel}: names {owner_repo}, Cargo.toml says {repo}"));
            }
            if let Some(r) = after.strip_prefix('@')
                && r != tag
            {
                wrong.push(format!("{rel}: uses {owner_repo}@{r}, the release is {tag}"));
            }
        }
    }
    assert!(seen >= 15, "only {seen} references found: the scan is broken");
    assert!(wrong.is_empty(), "{wrong:#?}");
    for once in [
        "examples/gitlab/cgp-gate.gitlab-ci.yml",
        "examples/slurm/gate.sbatch",
        "examples/k8s/indexed-job.yaml",
        "scripts/install.sh",
    ] {
        let text = std::fs::read_to_string(root().join(once)).unwrap();
        assert_eq!(
            text.matches(&repo).count(),
            1,
            "{once} names {repo} more than once"
        );
    }
    // The Action's inputs: every `with:` key given to it in the example workflows.
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    for e in std::fs::read_dir(root().join("examples/workflows")).unwrap() {
        let p = e.unwrap().path();
        let rel = p.strip_prefix(root()).unwrap().display().to_string();
        for doc in crate::ci_examples::yaml_docs(&rel) {
            for job in doc["jobs"].as_object().into_iter().flat_map(|j| j.values()) {
                for step in job["steps"].as_array().into_iter().flatten() {
                    if !step["uses"]
                        .as_str()
                        .is_some_and(|u| u.starts_with(&format!("{repo}@")))
                    {
                        continue;
                    }
                    for key in step["with"].as_object().into_iter().flat_map(|w| w.keys()) {
                        assert!(
                            action.contains(&format!("\n  {key}:\n")),
                            "{rel} gives the Action `{key}`, which action.yml does not have"
                        );
                    }
                }
            }
        }
    }
}

/// The lines of `text` that pipe a download into a shell (`curl ... | sh`, the pipe perhaps on
/// the next line): the pipe hides a failed download, and the line exits 0 (issue 59, item 8).
fn downloads_piped_into_a_shell(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let piped = ["| sh", "| bash", "|sh", "|bash"]
            .iter()
            .any(|p| line.contains(p));
        let fetch = |l: &str| l.contains("curl ") || l.contains("wget ");
        if piped && (fetch(line) || i > 0 && fetch(lines[i - 1])) {
            out.push(format!("{}: {}", i + 1, line.trim()));
        }
    }
    out
}

/// Issue 59, item 8: every install line a user copies downloads the installer, then runs it (no
/// `curl | sh`, whose pipe hides a failed download); and where the README and the getting-started
/// page give the release's install lines, they say the placeholder has no release yet and give the
/// build from source beside them.
#[test]
fn install_lines_download_then_run_and_say_the_release_is_not_published() {
    assert_eq!(
        downloads_piped_into_a_shell(
            "curl -fsSL https://x/cgp-gate-installer.sh \\\n  | sh -s -- --to d\nok | sh\n"
        ),
        ["2: | sh -s -- --to d"]
    );
    let mut files: Vec<PathBuf> = [
        "README.md",
        "action.yml",
        "scripts/install.sh",
        "scripts/action.sh",
        "scripts/package-release.sh",
    ]
    .iter()
    .map(|f| root().join(f))
    .collect();
    for dir in [
        "docs",
        "examples/workflows",
        "examples/gitlab",
        "examples/slurm",
        "examples/k8s",
    ] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    let mut piped = Vec::new();
    for f in files.iter().filter(|f| f.is_file()) {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        piped.extend(
            downloads_piped_into_a_shell(&text)
                .into_iter()
                .map(|l| format!("{rel}:{l}")),
        );
    }
    assert!(piped.is_empty(), "{piped:#?}");
    for page in ["README.md", "docs/getting-started.md"] {
        let text = std::fs::read_to_string(root().join(page)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut installs = 0;
        for (i, line) in lines.iter().enumerate() {
            if !(line.contains("cgp-gate-installer.sh &&") || line.contains("pip install cgp-gate")) {
                continue;
            }
            installs += 1;
            let near = lines[i.saturating_sub(12)..(i + 12).min(lines.len())].join("\n");
            assert!(
                near.contains("ot published yet") && near.contains("cargo install --locked --path ."),
                "{page}:{}: an install line with no word that the release is not published, or no build from source beside it",
                i + 1
            );
        }
        assert!(installs >= 1, "{page} has no install line: the check is broken");
    }
}

/// Each reference to a GitHub repository named `name`: `OWNER/name` in a URL, a `uses:`, or a
/// `CGP_GATE_REPOSITORY` value, with what follows it (`@ref` for a `uses:`). Written by hand: the
/// tests have no regex crate, and the shape is one token.
fn regex_lite(name: &str) -> impl Fn(&str) -> Vec<(String, String)> + '_ {
    move |text: &str| {
        let mut found = Vec::new();
        let needle = format!("/{name}");
        let mut from = 0;
        while let Some(i) = text[from..].find(&needle) {
            let at = from + i;
            from = at + needle.len();
            let after = &text[from..];
            // `/name` ends there (not `/name-foo`, `/name.yaml`, `/namespace`).
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                continue;
            }
            let owner_start = text[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
                .map_or(0, |p| p + 1);
            let owner = &text[owner_start..at];
            let before = &text[..owner_start];
            let is_ref = before.ends_with("github.com/")
                || before.ends_with("githubusercontent.com/")
                || before.ends_with("uses: ")
                || before.ends_with("CGP_GATE_REPOSITORY: ")
                || before.ends_with("CGP_GATE_REPOSITORY:=")
                || before.ends_with("CGP_GATE_REPOSITORY:-");
            if owner.is_empty() || !is_ref {
                continue;
            }
            let tail: String = after
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '`' && *c != '"' && *c != ')')
                .collect();
            found.push((format!("{owner}/{name}"), tail));
        }
        found
    }
}
