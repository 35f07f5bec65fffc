//! Which environment variables are credentials: the one rule every profiler backend (ncu, nsys,
//! CUPTI) applies before it starts the program under test, which is built from the pull request
//! and must never see the CI job's tokens. A spec passes a variable on purpose with
//! `env_passthrough` (docs/spec.md).

/// Credentials of the CI systems whose names the generic suffixes below do not catch.
const NAMED: &[&str] = &[
    // GitHub Actions: the OIDC request URL is useless without its token but names the job.
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_RUNTIME_URL",
    "ACTIONS_RESULTS_URL",
    "ACTIONS_CACHE_URL",
    "GITHUB_PAT",
    // GitLab: the repository URL carries `gitlab-ci-token:<job token>@`.
    "CI_REPOSITORY_URL",
    "CI_JOB_JWT",
    "CI_SERVER_TLS_KEY_FILE",
    "GITLAB_PAT",
    // Buildkite.
    "BUILDKITE_AGENT_ACCESS_TOKEN",
    "BUILDKITE_AGENT_TOKEN",
    "BUILDKITE_API_TOKEN",
    "BUILDKITE_AGENT_JOB_API_SOCKET",
    "BUILDKITE_AGENT_JOB_API_TOKEN",
    // Jenkins: `JENKINS_*` logins and the secret of an inbound agent.
    "JENKINS_SECRET",
    "JENKINS_API_TOKEN",
    "JENKINS_PASSWORD",
    // Cloud credentials a runner often has.
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
    // cgp-gate's own: the results store's URL may hold its password (docs/store.md).
    "CGP_GATE_STORE",
];

/// Name prefixes whose every variable is a credential (`CI_JOB_JWT_V1`, `CI_JOB_JWT_V2`).
const PREFIXES: &[&str] = &["CI_JOB_JWT", "ACTIONS_ID_TOKEN", "ACTIONS_RUNTIME_TOKEN"];

/// Name endings of credentials, any CI: `GITHUB_TOKEN`, `GH_TOKEN`, `GITLAB_TOKEN`,
/// `CI_JOB_TOKEN`, `CI_REGISTRY_PASSWORD`, `CI_DEPLOY_PASSWORD`, `NPM_TOKEN`, `OPENAI_API_KEY`, ...
const SUFFIXES: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "SECRET_KEY",
    "PRIVATE_KEY",
    "CREDENTIALS",
    "_JWT",
];

/// Words of a name (split at `_`, `-` and `.`) that make it a credential wherever they stand
/// (issue 44: `GH_PAT`, `OPENAI_KEY`, `SSH_AUTH_SOCK`, `DOCKER_AUTH_CONFIG`, `MY_TOKEN_2`). Whole
/// words only, so `MAX_TOKENS`, `TOKENIZERS_PARALLELISM`, `PATH` and `KEYBOARD` stay.
const WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PAT",
    "KEY",
    "APIKEY",
    "AUTH",
    "CREDENTIAL",
    "CREDENTIALS",
    "COOKIE",
    "JWT",
    "PRIVATE",
];

/// Whether the environment variable `name` holds a credential that the program under test must
/// not receive: the named ones of GitHub, GitLab, Buildkite and Jenkins, `CI_JOB_JWT*`, and any
/// name (any case) that is or ends in `TOKEN`, `SECRET`, `PASSWORD`, `API_KEY`, `ACCESS_KEY`,
/// `PRIVATE_KEY`, `CREDENTIALS` (after `_` or as the whole name, so `TOKENIZERS_PARALLELISM`
/// stays).
pub fn is_credential(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    if NAMED.contains(&up.as_str()) || PREFIXES.iter().any(|p| up.starts_with(p)) {
        return true;
    }
    if up.split(['_', '-', '.']).any(|w| WORDS.contains(&w)) {
        return true;
    }
    SUFFIXES.iter().any(|s| {
        up == s.trim_start_matches('_')
            || up
                .strip_suffix(s)
                .is_some_and(|head| head.ends_with('_') || s.starts_with('_'))
    })
}

/// Name prefixes of the CI systems' own variables.
const CI_PREFIXES: &[&str] = &[
    "GITHUB_",
    "GH_",
    "ACTIONS_",
    "RUNNER_",
    "CI_",
    "GITLAB_",
    "BUILDKITE_",
    "JENKINS_",
];

/// Whether `name` is a credential of the CI job itself (`GITHUB_TOKEN`, `ACTIONS_RUNTIME_TOKEN`,
/// `ACTIONS_ID_TOKEN_REQUEST_TOKEN`, `CI_JOB_TOKEN`, `GITLAB_TOKEN`, `GH_PAT`, ...): a credential
/// (`is_credential`) that is one of the named ones or carries a CI system's prefix. A spec (which
/// comes from the pull request) may pass one to the program only with a second key that
/// acknowledges it (`env_passthrough_ci_credentials`, docs/spec.md).
pub fn is_ci_credential(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    is_credential(&up)
        && (NAMED.contains(&up.as_str())
            || PREFIXES.iter().any(|p| up.starts_with(p))
            || CI_PREFIXES.iter().any(|p| up.starts_with(p)))
}

/// The names among `names` that [`is_credential`] and that `passthrough` does not name: what a
/// backend removes from the environment the program inherits.
pub fn to_remove<'a>(names: impl IntoIterator<Item = &'a str>, passthrough: &[String]) -> Vec<&'a str> {
    names
        .into_iter()
        .filter(|n| is_credential(n) && !passthrough.iter().any(|p| p == n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_credentials_are_recognised_and_ordinary_variables_are_not() {
        for n in [
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "GITLAB_TOKEN",
            "CI_JOB_TOKEN",
            "CI_JOB_JWT",
            "CI_JOB_JWT_V2",
            "CI_REGISTRY_PASSWORD",
            "CI_DEPLOY_PASSWORD",
            "CI_DEPENDENCY_PROXY_PASSWORD",
            "CI_REPOSITORY_URL",
            "BUILDKITE_AGENT_ACCESS_TOKEN",
            "JENKINS_SECRET",
            "ACTIONS_RUNTIME_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_URL",
            "HF_TOKEN",
            "my_service_secret",
            "DB_PASSWORD",
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "TOKEN",
            "PASSWORD",
            "GH_PAT",
            "OPENAI_KEY",
            "SSH_AUTH_SOCK",
            "DOCKER_AUTH_CONFIG",
            "MY_TOKEN_2",
            "CGP_GATE_STORE",
        ] {
            assert!(is_credential(n), "{n}");
        }
        for n in [
            "PATH",
            "HOME",
            "LD_LIBRARY_PATH",
            "CUDA_VISIBLE_DEVICES",
            "TOKENIZERS_PARALLELISM",
            "GITHUB_SHA",
            "CI_JOB_ID",
            "CI_PROJECT_ID",
            "BUILDKITE_BUILD_NUMBER",
            "MAX_TOKENS",
            "PYTORCH_CUDA_ALLOC_CONF",
            "PWD",
            "KEYBOARD_LAYOUT",
        ] {
            assert!(!is_credential(n), "{n}");
        }
    }

    #[test]
    fn ci_credentials_are_the_ci_systems_own() {
        for n in [
            "GITHUB_TOKEN",
            "ACTIONS_RUNTIME_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "CI_JOB_TOKEN",
            "GITLAB_TOKEN",
            "GH_PAT",
            "CI_JOB_JWT_V2",
        ] {
            assert!(is_ci_credential(n), "{n}");
        }
        for n in ["HF_TOKEN", "OPENAI_API_KEY", "GITHUB_SHA", "CI_JOB_ID"] {
            assert!(!is_ci_credential(n), "{n}");
        }
    }

    #[test]
    fn passthrough_keeps_only_the_named_variables() {
        let names = ["GITLAB_TOKEN", "HF_TOKEN", "PATH"];
        assert_eq!(to_remove(names, &["HF_TOKEN".to_owned()]), ["GITLAB_TOKEN"]);
    }
}
