//! Kernel names as the console table shows them in a narrow column: what identifies a kernel
//! stays, what does not goes first.

/// The top-level positions in `name` where `pat` occurs (outside template arguments and
/// parameter lists). An unmatched closing bracket (ncu 2025.3 prints `(anonymous namespace)` as
/// `unnamed>`) does not make the depth negative.
fn top_level(name: &str, pat: &str) -> Vec<usize> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    for (k, c) in name.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 && name[k..].starts_with(pat) => out.push(k),
            _ => {}
        }
    }
    out
}

/// A kernel name as the console table shows it in `max` characters. The least useful parts go
/// first: the parameter list, then the return type (`void`), then the leading namespaces; then
/// the middle, so the start of the function's name and the end of its template arguments stay:
/// `void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>` ->
/// `vectorized_layer_norm_kernel<Half, float, 0>` -> `vectorized_lay…<Half, float, 0>`. The
/// JSON and HTML reports keep the full name.
pub fn short_kernel(name: &str, max: usize) -> String {
    middle_cut(&strip_kernel(name, max), max)
}

/// A kernel name without, as far as `max` needs, its parameter list, its return type and its
/// leading namespaces (the first steps of [`short_kernel`]).
fn strip_kernel(name: &str, max: usize) -> String {
    let mut form = name.trim().to_owned();
    if form.chars().count() <= max {
        return form;
    }
    // The parameter list: a trailing `(...)`, found from its closing parenthesis backwards.
    if form.ends_with(')') {
        let mut depth = 0usize;
        let mut open = None;
        for (k, c) in form.char_indices().rev() {
            match c {
                ')' => depth += 1,
                '(' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        open = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        if let Some(open) = open.filter(|&k| k > 0) {
            form = form[..open].trim_end().to_owned();
        }
    }
    // The return type: what comes before the last top-level space (`void`, `static void`).
    if form.chars().count() > max
        && let Some(&sp) = top_level(&form, " ").last()
    {
        form = form[sp + 1..].to_owned();
    }
    // Leading namespaces (and classes): up to the last top-level `::`.
    if form.chars().count() > max
        && let Some(&colons) = top_level(&form, "::").last()
    {
        form = form[colons + 2..].to_owned();
    }
    form
}

/// The kernel cells of a table whose kernel column is `max` characters wide, keeping what tells
/// the kernels apart. Each name first loses its parameter list, return type and namespaces
/// ([`strip_kernel`]). Where names are still too long and two or more of them share a start
/// (`nvjet_sm90_tst_` of two cuBLAS kernels), the shared start, cut at a `_`, `:` or `<`, becomes
/// `…`. Then a name with template arguments loses its middle (the function's name and the end
/// of its arguments stay: `vectorized_lay…<Half, float, 0>`), and a plain identifier its end,
/// since library kernels put what distinguishes them after their family
/// (`nvjet_sm90_tst_256x128_64x4_1x2_h_bz_co…` keeps its tile shape).
pub fn kernel_cells(names: &[String], max: usize) -> Vec<String> {
    let forms: Vec<String> = names.iter().map(|n| strip_kernel(n, max)).collect();
    let mut long: Vec<&str> = forms
        .iter()
        .filter(|f| f.chars().count() > max)
        .map(String::as_str)
        .collect();
    long.sort_unstable();
    long.dedup();
    let shared = match long.as_slice() {
        [first, rest @ ..] if !rest.is_empty() => {
            let mut n = first.len();
            for other in rest {
                n = n.min(
                    first
                        .bytes()
                        .zip(other.bytes())
                        .take_while(|(a, b)| a == b)
                        .count(),
                );
            }
            // Whole tokens only: up to and including the last separator of the shared start.
            first[..n].rfind(['_', ':', '<']).map_or(0, |k| k + 1)
        }
        _ => 0,
    };
    forms
        .into_iter()
        .map(|f| {
            if f.chars().count() <= max {
                return f;
            }
            let f = if shared >= 6 && f.is_char_boundary(shared) {
                format!("…{}", &f[shared..])
            } else {
                f
            };
            if f.ends_with('>') && f.contains('<') {
                middle_cut(&f, max)
            } else {
                crate::report::table::truncate(&f, max)
            }
        })
        .collect()
}

/// `text` in `max` characters with its middle replaced by `…` (the start a little longer).
fn middle_cut(text: &str, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max {
        return text.to_owned();
    }
    if max < 3 {
        return chars[..max].iter().collect();
    }
    let keep = max - 1;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}
