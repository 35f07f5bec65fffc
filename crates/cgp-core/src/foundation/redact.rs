//! The redactor of secret-looking values (issue 44, item 4): program output (the tail a run
//! error quotes) and API response bodies pass through [`secrets`] before any report (JSON,
//! Markdown, HTML, JUnit, the step summary, the pull-request comment, which GitHub does not
//! mask) or the console sees them. What it replaces with `[redacted]`:
//!
//! - known token shapes, whatever stands around them: GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`,
//!   `ghr_`, `github_pat_`), GitLab (`glpat-`, `glcbt-`, ...), Slack (`xox?-`), OpenAI and
//!   Anthropic (`sk-`), AWS access key ids (`AKIA...`), Google API keys (`AIza...`), npm
//!   (`npm_`), Hugging Face (`hf_`), JSON web tokens (`eyJ...`);
//! - the value of `KEY=value`, `KEY: value` and `"key": "value"` where the key looks secret
//!   (`secrets::is_credential`: one of its words is a token, secret, password, key, PAT, auth or
//!   credential word, or it is a named CI credential): `GH_PAT=...`, `token=...`, `OPENAI_KEY: ...`;
//! - `Authorization`/`PRIVATE-TOKEN`/`Cookie` headers and `Bearer`/`token`/`Basic` credentials;
//! - URL passwords (`scheme://user:***@`);
//! - the value of every credential variable of this process's environment (a name
//!   `secrets::is_credential` takes: `GITHUB_TOKEN`, `GITLAB_TOKEN`, `CI_JOB_TOKEN`, `MY_API_KEY`,
//!   ...), wherever it stands and whatever its shape: a token without a known prefix that an API
//!   error body or a program echoes is still the token cgp-gate holds (issue 58, item 12). Values
//!   shorter than [`MIN_SECRET_CHARS`] are left, so that `1` or `true` is not redacted everywhere.
//!
//! Written by hand: the rules are a handful of regular expressions over our own credential list;
//! the secret-scanning crates (e.g. those of gitleaks' rules) scan repositories, not one line,
//! and do not know the key words of this tool's environment rule.

use std::sync::LazyLock;

static ECHOES: LazyLock<Vec<(regex::Regex, &'static str)>> = LazyLock::new(|| {
    [
        // `Authorization: token X`, `Authorization: Bearer X`, `"authorization": "X"`, and
        // GitLab's `PRIVATE-TOKEN: X`, `JOB-TOKEN: X` headers, quoted or not.
        (
            r#"(?i)((?:proxy-)?authorization|private-token|job-token|x-api-key|cookie|set-cookie)(["']?\s*[:=]\s*["']?)[^"'\r\n,}]*"#,
            "$1$2[redacted]",
        ),
        (r"(?i)\b(bearer|token|basic)\s+[A-Za-z0-9._~+/=-]{8,}", "$1 [redacted]"),
        (
            r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|glpat-[A-Za-z0-9_-]{16,}|gl(?:cbt|dt|ptt|rt|soat)-[A-Za-z0-9_-]{16,}|xox[abposr]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+)",
            "[redacted]",
        ),
    ]
    .into_iter()
    .map(|(re, to)| (regex::Regex::new(re).expect("a valid regex"), to))
    .collect()
});

static URL_CREDENTIALS: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/@:]*):[^\s/@]*@").expect("a valid regex")
});

/// `scheme://user:password@host` with the password replaced by `***`.
pub fn redact_urls(text: &str) -> std::borrow::Cow<'_, str> {
    URL_CREDENTIALS.replace_all(text, "$1:***@")
}

/// `KEY=value`, `KEY: value`, `"key": "value"`: the key, what joins it to the value, the value.
static ASSIGNMENT: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r#"([A-Za-z_][A-Za-z0-9_.-]*)(["']?[ \t]*[:=][ \t]*["']?)([^\s"',;}&]+)"#)
        .expect("a valid regex")
});

/// Whether a key (an environment variable's name, a field of a log line) looks like it names a
/// secret: the one rule, [`super::secrets::is_credential`], any case.
pub(crate) fn secret_key(key: &str) -> bool {
    super::secrets::is_credential(key)
}

/// The fewest characters a credential variable's value has for [`secrets`] to redact it wherever
/// it appears.
pub const MIN_SECRET_CHARS: usize = 8;

/// The values of this process's credential variables, longest first (read once).
static CONFIGURED: LazyLock<Vec<String>> = LazyLock::new(|| {
    configured_values(
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
    )
});

/// The secret values among `(name, value)` pairs: those of credential names, at least
/// [`MIN_SECRET_CHARS`] long, longest first, each once.
fn configured_values(vars: impl Iterator<Item = (String, String)>) -> Vec<String> {
    let mut values: Vec<String> = vars
        .filter(|(k, _)| super::secrets::is_credential(k))
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| v.chars().count() >= MIN_SECRET_CHARS)
        .collect();
    values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    values.dedup();
    values
}

/// `text` with each of `values` replaced by `[redacted]`.
fn redact_values(text: &str, values: &[String]) -> String {
    let mut out = text.to_owned();
    for v in values {
        if out.contains(v.as_str()) {
            out = out.replace(v.as_str(), "[redacted]");
        }
    }
    out
}

/// `text` with every secret-looking value replaced by `[redacted]` (the module's rules), and
/// every value of a credential variable this process holds.
pub fn secrets(text: &str) -> String {
    let text = redact_values(text, &CONFIGURED);
    let mut out = redact_urls(&text).into_owned();
    for (re, to) in ECHOES.iter() {
        out = re.replace_all(&out, *to).into_owned();
    }
    ASSIGNMENT
        .replace_all(&out, |c: &regex::Captures<'_>| {
            if secret_key(&c[1]) && &c[3] != "[redacted]" {
                format!("{}{}[redacted]", &c[1], &c[2])
            } else {
                c[0].to_owned()
            }
        })
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_values_are_redacted_and_ordinary_text_stays() {
        for (input, gone) in [
            ("GH_PAT=abc123def456", "abc123def456"),
            ("token=s3cr3t-value", "s3cr3t-value"),
            ("export OPENAI_KEY='sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA'", "sk-proj"),
            ("MY_TOKEN_2: hunter2", "hunter2"),
            ("{\"password\": \"p@ss\"}", "p@ss"),
            ("push with ghp_0123456789abcdefABCDEF0123 now", "ghp_0123"),
            ("Authorization: Bearer abcdefghijkl", "abcdefghijkl"),
            ("https://user:pw@example.com/x", "pw@"),
            ("id AKIAABCDEFGHIJKLMNOP", "AKIAABCDEFGHIJKLMNOP"),
        ] {
            let r = secrets(input);
            assert!(!r.contains(gone), "{input} -> {r}");
            assert!(r.contains("[redacted]") || r.contains("***"), "{input} -> {r}");
        }
        for keep in [
            "n=1024 time=73000 ns",
            "TOKENIZERS_PARALLELISM=false",
            "error: kernel matmul failed at size=4096",
            "path=/tmp/x",
        ] {
            assert_eq!(secrets(keep), keep);
        }
    }

    #[test]
    fn values_of_credential_variables_are_redacted_whatever_their_shape() {
        let vars = [
            ("GITHUB_TOKEN", "k9Qz7Lm2Xv8Rt4Wp"),
            ("CI_JOB_TOKEN", "short"),
            ("PATH", "/usr/local/bin:/usr/bin"),
            ("MY_API_KEY", "k9Qz7Lm2Xv8Rt4Wp-and-more"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let values = configured_values(vars.into_iter());
        assert_eq!(values, ["k9Qz7Lm2Xv8Rt4Wp-and-more", "k9Qz7Lm2Xv8Rt4Wp"]);
        let body = r#"{"message":"Bad credentials k9Qz7Lm2Xv8Rt4Wp","echo":"k9Qz7Lm2Xv8Rt4Wp-and-more","path":"/usr/bin","x":"short"}"#;
        let r = redact_values(body, &values);
        assert!(!r.contains("k9Qz7Lm2Xv8Rt4Wp"), "{r}");
        assert!(r.contains("/usr/bin") && r.contains("short"), "{r}");
        assert_eq!(r.matches("[redacted]").count(), 2, "{r}");
    }

    #[test]
    fn secret_keys_cover_the_issue_44_names() {
        for k in [
            "GH_PAT",
            "OPENAI_KEY",
            "SSH_AUTH_SOCK",
            "DOCKER_AUTH_CONFIG",
            "MY_TOKEN_2",
            "GITHUB_TOKEN",
            "token",
            "db_password",
        ] {
            assert!(secret_key(k), "{k}");
        }
        for k in [
            "PATH",
            "HOME",
            "TOKENIZERS_PARALLELISM",
            "CUDA_VISIBLE_DEVICES",
            "KEYBOARD_LAYOUT",
        ] {
            assert!(!secret_key(k), "{k}");
        }
    }
}
