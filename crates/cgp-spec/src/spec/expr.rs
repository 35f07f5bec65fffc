//! `flops:` and `bytes:` expressions: arithmetic over size parameters (`2*m*n*k`).
//!
//! Only numbers, parameter names, `+ - * /` and parentheses: the expression is data, never code.

use super::model::Size;
use super::template::is_param_name;

#[derive(Debug, Clone, PartialEq)]
enum Ast {
    Num(f64),
    Param(String),
    Neg(Box<Ast>),
    Bin(Box<Ast>, Op, Box<Ast>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    ast: Ast,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Ident(String),
    Op(char),
    Open,
    Close,
}

const ALLOWED: &str = "numbers, parameter names, `+ - * /` and parentheses";

/// Longest expression accepted, in characters. Real ones are a few dozen (`4*(m*k + k*n + m*n)`);
/// the limit keeps the parse tree (and the recursion that walks it) small whatever the input.
pub const MAX_CHARS: usize = 1000;
/// Deepest nesting of parentheses and unary minus accepted.
pub const MAX_DEPTH: usize = 32;

fn tokenize(text: &str) -> Result<Vec<(usize, Token)>, String> {
    let mut out = Vec::new();
    let bytes: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == '.') {
                i += 1;
            }
            // Exponent: `1e9`, `2.5E-3`.
            if i < bytes.len() && matches!(bytes[i], 'e' | 'E') {
                let mut j = i + 1;
                if j < bytes.len() && matches!(bytes[j], '+' | '-') {
                    j += 1;
                }
                if j < bytes.len() && bytes[j].is_ascii_digit() {
                    i = j;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let s: String = bytes[start..i].iter().collect();
            let v: f64 = s
                .parse()
                .map_err(|_| format!("`{s}` at character {} is not a number", start + 1))?;
            out.push((start, Token::Num(v)));
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == '_') {
                i += 1;
            }
            out.push((start, Token::Ident(bytes[start..i].iter().collect())));
        } else if matches!(c, '+' | '-' | '*' | '/') {
            i += 1;
            out.push((start, Token::Op(c)));
        } else if c == '(' {
            i += 1;
            out.push((start, Token::Open));
        } else if c == ')' {
            i += 1;
            out.push((start, Token::Close));
        } else {
            return Err(format!(
                "`{c}` at character {} is not allowed; use only {ALLOWED}",
                start + 1
            ));
        }
    }
    Ok(out)
}

struct P {
    tokens: Vec<(usize, Token)>,
    pos: usize,
    len: usize,
    depth: usize,
}

impl P {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|(_, t)| t)
    }

    fn at(&self) -> usize {
        self.tokens.get(self.pos).map_or(self.len, |(i, _)| *i) + 1
    }

    fn sum(&mut self) -> Result<Ast, String> {
        let mut lhs = self.product()?;
        while let Some(Token::Op(c @ ('+' | '-'))) = self.peek() {
            let op = if *c == '+' { Op::Add } else { Op::Sub };
            self.pos += 1;
            let rhs = self.product()?;
            lhs = Ast::Bin(Box::new(lhs), op, Box::new(rhs));
        }
        Ok(lhs)
    }

    fn product(&mut self) -> Result<Ast, String> {
        let mut lhs = self.unary()?;
        while let Some(Token::Op(c @ ('*' | '/'))) = self.peek() {
            let op = if *c == '*' { Op::Mul } else { Op::Div };
            self.pos += 1;
            let rhs = self.unary()?;
            lhs = Ast::Bin(Box::new(lhs), op, Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Ast, String> {
        if let Some(Token::Op('-')) = self.peek() {
            let at = self.at();
            self.pos += 1;
            self.enter(at)?;
            let inner = self.unary();
            self.depth -= 1;
            return Ok(Ast::Neg(Box::new(inner?)));
        }
        self.atom()
    }

    fn enter(&mut self, at: usize) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "the expression nests more than {MAX_DEPTH} levels deep (parentheses or unary `-`) at character {at}; simplify it"
            ));
        }
        Ok(())
    }

    fn atom(&mut self) -> Result<Ast, String> {
        let at = self.at();
        let tok = self.peek().cloned();
        self.pos += 1;
        match tok {
            Some(Token::Num(v)) => Ok(Ast::Num(v)),
            Some(Token::Ident(name)) => {
                if is_param_name(&name) {
                    Ok(Ast::Param(name))
                } else {
                    Err(format!("`{name}` at character {at} is not a parameter name"))
                }
            }
            Some(Token::Open) => {
                self.enter(at)?;
                let inner = self.sum();
                self.depth -= 1;
                let inner = inner?;
                match self.peek() {
                    Some(Token::Close) => {
                        self.pos += 1;
                        Ok(inner)
                    }
                    _ => Err(format!("missing `)` for the `(` at character {at}")),
                }
            }
            Some(Token::Close) => Err(format!("unexpected `)` at character {at}")),
            Some(Token::Op(c)) => Err(format!(
                "expected a number, a parameter or `(` at character {at}, found `{c}`"
            )),
            None => Err("the expression ends too early".to_owned()),
        }
    }
}

impl Expr {
    /// Parse an expression.
    ///
    /// # Errors
    /// A message naming the character position of the problem.
    pub fn parse(text: &str) -> Result<Self, String> {
        let chars = text.chars().count();
        if chars > MAX_CHARS {
            return Err(format!(
                "the expression is {chars} characters long, more than the {MAX_CHARS} allowed; simplify it"
            ));
        }
        let tokens = tokenize(text)?;
        if tokens.is_empty() {
            return Err("the expression is empty".to_owned());
        }
        let mut p = P {
            tokens,
            pos: 0,
            len: chars,
            depth: 0,
        };
        let ast = p.sum()?;
        if p.pos < p.tokens.len() {
            let at = p.at();
            return Err(format!(
                "unexpected text at character {at}; use only {ALLOWED}, with an operator between terms"
            ));
        }
        Ok(Self { ast })
    }

    /// Parameter names used, in first-use order, without repeats.
    pub fn params(&self) -> Vec<&str> {
        fn walk<'a>(a: &'a Ast, out: &mut Vec<&'a str>) {
            match a {
                Ast::Num(_) => {}
                Ast::Param(p) => {
                    if !out.contains(&p.as_str()) {
                        out.push(p);
                    }
                }
                Ast::Neg(x) => walk(x, out),
                Ast::Bin(l, _, r) => {
                    walk(l, out);
                    walk(r, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.ast, &mut out);
        out
    }

    /// The value for one size; every parameter used must be a number there.
    ///
    /// # Errors
    /// A message for a missing or non-numeric parameter, or a result that is not a finite number
    /// (division by zero).
    pub fn eval(&self, size: &Size) -> Result<f64, String> {
        fn go(a: &Ast, size: &Size) -> Result<f64, String> {
            Ok(match a {
                Ast::Num(v) => *v,
                Ast::Param(p) => {
                    let Some(v) = size.get(p) else {
                        return Err(format!("parameter `{p}` has no value in size `{}`", size.key()));
                    };
                    v.trim().parse::<f64>().map_err(|_| {
                        format!("parameter `{p}` is `{v}` in size `{}`, not a number", size.key())
                    })?
                }
                Ast::Neg(x) => -go(x, size)?,
                Ast::Bin(l, op, r) => {
                    let (l, r) = (go(l, size)?, go(r, size)?);
                    match op {
                        Op::Add => l + r,
                        Op::Sub => l - r,
                        Op::Mul => l * r,
                        Op::Div => l / r,
                    }
                }
            })
        }
        let v = go(&self.ast, size)?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(format!(
                "the value is not a finite number in size `{}` (division by zero?)",
                size.key()
            ))
        }
    }
}

/// Evaluate a `flops:`/`bytes:` expression of a loaded spec for one of its sizes.
///
/// # Errors
/// As [`Expr::parse`] and [`Expr::eval`]; neither happens for a target of a loaded spec, whose
/// expressions were checked against every size.
pub fn evaluate(expr: &str, size: &Size) -> Result<f64, String> {
    Expr::parse(expr)?.eval(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(p: &[(&str, &str)]) -> Size {
        Size {
            params: p.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect(),
        }
    }

    #[test]
    #[expect(clippy::float_cmp, reason = "the values compared are exactly representable")]
    fn arithmetic_with_precedence() {
        let s = size(&[("m", "64"), ("n", "32"), ("k", "16")]);
        assert_eq!(evaluate("2*m*n*k", &s).unwrap(), 65536.0);
        assert_eq!(
            evaluate("4 * (m*k + k*n + m*n)", &s).unwrap(),
            4.0 * (1024.0 + 512.0 + 2048.0)
        );
        assert_eq!(evaluate("m - n - k", &s).unwrap(), 16.0);
        assert_eq!(evaluate("m / n / 2", &s).unwrap(), 1.0);
        assert_eq!(evaluate("-m + 1e2", &s).unwrap(), 36.0);
        assert_eq!(evaluate("1.5e-1 * 10", &s).unwrap(), 1.5);
    }

    #[test]
    fn params_are_listed_once() {
        let e = Expr::parse("2*m*n*k + m").unwrap();
        assert_eq!(e.params(), vec!["m", "n", "k"]);
    }

    #[test]
    fn bad_expressions_name_the_problem() {
        assert!(Expr::parse("2**n").unwrap_err().contains("character 3"));
        assert!(
            Expr::parse("n^2")
                .unwrap_err()
                .contains("`^` at character 2 is not allowed")
        );
        assert!(Expr::parse("(n + 1").unwrap_err().contains("missing `)`"));
        assert!(
            Expr::parse("n m")
                .unwrap_err()
                .contains("unexpected text at character 3")
        );
        assert!(Expr::parse("").unwrap_err().contains("empty"));
        assert!(Expr::parse("n +").unwrap_err().contains("ends too early"));
        assert!(Expr::parse("1.2.3").unwrap_err().contains("not a number"));
        assert!(Expr::parse("pow(n)").is_err());
    }

    #[test]
    fn evaluation_errors() {
        let s = size(&[("n", "abc"), ("z", "0")]);
        assert!(evaluate("n", &s).unwrap_err().contains("not a number"));
        assert!(evaluate("m", &s).unwrap_err().contains("no value"));
        assert!(evaluate("1/z", &s).unwrap_err().contains("finite"));
    }
}
