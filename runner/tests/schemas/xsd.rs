//! A focused XML Schema (XSD 1.0) validator for the tests: enough of the
//! language for runner/schema/junit.xsd (global and local elements, `ref`,
//! named and anonymous complex types, sequence and choice with occurrence
//! bounds, attributes with `use`, simple content by extension, and the
//! built-in types the schema names). Any other construct in a schema is an
//! error, so a schema this cannot read can never pass a document.
//!
//! No Rust crate validates XSD without a C library, and the checks must run
//! on a fresh machine with nothing but cargo; see runner/tests/reports.rs.

use std::collections::HashMap;

use roxmltree::{Document, Node};

const XS: &str = "http://www.w3.org/2001/XMLSchema";

#[derive(Debug, Clone)]
enum Particle {
    Element {
        decl: Box<Element>,
        min: usize,
        max: Option<usize>,
    },
    Ref {
        name: String,
        min: usize,
        max: Option<usize>,
    },
    Sequence {
        items: Vec<Particle>,
        min: usize,
        max: Option<usize>,
    },
    Choice {
        items: Vec<Particle>,
        min: usize,
        max: Option<usize>,
    },
}

#[derive(Debug, Clone)]
enum Content {
    /// Child elements only (whitespace between them).
    Elements(Option<Particle>),
    /// Text of a built-in type.
    Simple(String),
}

#[derive(Debug, Clone)]
struct ComplexType {
    content: Content,
    attributes: Vec<Attribute>,
}

#[derive(Debug, Clone)]
struct Attribute {
    name: String,
    ty: String,
    required: bool,
}

#[derive(Debug, Clone)]
struct Element {
    name: String,
    ty: ElementType,
}

#[derive(Debug, Clone)]
enum ElementType {
    Complex(ComplexType),
    Named(String),
}

pub struct Schema {
    elements: HashMap<String, Element>,
    types: HashMap<String, ComplexType>,
}

fn occurs(n: Node) -> Result<(usize, Option<usize>), String> {
    let min = match n.attribute("minOccurs") {
        Some(v) => v.parse().map_err(|_| format!("minOccurs {v:?}"))?,
        None => 1,
    };
    let max = match n.attribute("maxOccurs") {
        Some("unbounded") => None,
        Some(v) => Some(v.parse().map_err(|_| format!("maxOccurs {v:?}"))?),
        None => Some(1),
    };
    Ok((min, max))
}

fn xs_children<'a, 'i>(n: Node<'a, 'i>) -> Result<Vec<Node<'a, 'i>>, String> {
    let mut out = Vec::new();
    for c in n.children() {
        if c.is_element() {
            if c.tag_name().namespace() != Some(XS) {
                return Err(format!(
                    "non-XSD element {:?} in the schema",
                    c.tag_name().name()
                ));
            }
            out.push(c);
        }
    }
    Ok(out)
}

fn allowed_attrs(n: Node, allowed: &[&str]) -> Result<(), String> {
    for a in n.attributes() {
        if !allowed.contains(&a.name()) {
            return Err(format!(
                "unsupported attribute {:?} on xs:{}",
                a.name(),
                n.tag_name().name()
            ));
        }
    }
    Ok(())
}

impl Schema {
    pub fn parse(xsd: &str) -> Result<Self, String> {
        let doc = Document::parse(xsd).map_err(|e| format!("the schema is not XML: {e}"))?;
        let root = doc.root_element();
        if root.tag_name().namespace() != Some(XS) || root.tag_name().name() != "schema" {
            return Err("the root is not xs:schema".into());
        }
        allowed_attrs(root, &["elementFormDefault"])?;
        let mut schema = Schema {
            elements: HashMap::new(),
            types: HashMap::new(),
        };
        for c in xs_children(root)? {
            match c.tag_name().name() {
                "element" => {
                    let e = parse_element(c)?;
                    schema.elements.insert(e.name.clone(), e);
                }
                "complexType" => {
                    let name = c
                        .attribute("name")
                        .ok_or("a top-level complexType needs a name")?;
                    schema.types.insert(name.to_string(), parse_complex(c)?);
                }
                other => return Err(format!("unsupported top-level xs:{other}")),
            }
        }
        Ok(schema)
    }

    /// Validates `xml`; the error names the element path and what is wrong.
    pub fn validate(&self, xml: &str) -> Result<(), String> {
        let doc = Document::parse(xml).map_err(|e| format!("not well-formed XML: {e}"))?;
        let root = doc.root_element();
        let name = root.tag_name().name();
        let decl = self
            .elements
            .get(name)
            .ok_or_else(|| format!("root element <{name}> is not declared"))?;
        self.element(decl, root, &format!("/{name}"))
    }

    fn element(&self, decl: &Element, node: Node, path: &str) -> Result<(), String> {
        let ty = match &decl.ty {
            ElementType::Complex(t) => t.clone(),
            ElementType::Named(n) if n.starts_with("xs:") => ComplexType {
                content: Content::Simple(n.clone()),
                attributes: Vec::new(),
            },
            ElementType::Named(n) => self
                .types
                .get(n)
                .cloned()
                .ok_or_else(|| format!("{path}: unknown type {n:?}"))?,
        };
        for a in node.attributes() {
            if a.namespace().is_some() {
                return Err(format!(
                    "{path}: unexpected namespaced attribute {}",
                    a.name()
                ));
            }
            let Some(d) = ty.attributes.iter().find(|d| d.name == a.name()) else {
                return Err(format!("{path}: undeclared attribute {:?}", a.name()));
            };
            simple(&d.ty, a.value()).map_err(|e| format!("{path}/@{}: {e}", a.name()))?;
        }
        for d in ty.attributes.iter().filter(|d| d.required) {
            if node.attribute(d.name.as_str()).is_none() {
                return Err(format!("{path}: missing required attribute {:?}", d.name));
            }
        }
        match &ty.content {
            Content::Simple(t) => {
                if let Some(c) = node.children().find(|c| c.is_element()) {
                    return Err(format!(
                        "{path}: <{}> inside text-only content",
                        c.tag_name().name()
                    ));
                }
                let text: String = node.children().filter_map(|c| c.text()).collect();
                simple(t, &text).map_err(|e| format!("{path}: {e}"))
            }
            Content::Elements(particle) => {
                let mut kids = Vec::new();
                for c in node.children() {
                    if c.is_element() {
                        kids.push(c);
                    } else if c.is_text() && !c.text().unwrap_or_default().trim().is_empty() {
                        return Err(format!("{path}: text in element-only content"));
                    }
                }
                let used = match particle {
                    Some(p) => self.particle(p, &kids, 0, path)?,
                    None => 0,
                };
                match kids.get(used) {
                    Some(extra) => Err(format!(
                        "{path}: unexpected <{}> (child {})",
                        extra.tag_name().name(),
                        used + 1
                    )),
                    None => Ok(()),
                }
            }
        }
    }

    /// Matches `p` greedily from `kids[at]`; returns where it stopped.
    fn particle(
        &self,
        p: &Particle,
        kids: &[Node],
        at: usize,
        path: &str,
    ) -> Result<usize, String> {
        let (min, max) = match p {
            Particle::Element { min, max, .. }
            | Particle::Ref { min, max, .. }
            | Particle::Sequence { min, max, .. }
            | Particle::Choice { min, max, .. } => (*min, *max),
        };
        let mut pos = at;
        let mut count = 0;
        while max.is_none_or(|m| count < m) {
            match self.once(p, kids, pos, path)? {
                Some(next) if next > pos => {
                    pos = next;
                    count += 1;
                }
                _ => break,
            }
        }
        if count < min {
            return Err(format!(
                "{path}: expected {} at child {}, found {}",
                describe(p),
                pos + 1,
                kids.get(pos).map_or("nothing".to_string(), |k| format!(
                    "<{}>",
                    k.tag_name().name()
                ))
            ));
        }
        Ok(pos)
    }

    /// One occurrence of `p` at `kids[at]`, or `None` if it does not start there.
    fn once(
        &self,
        p: &Particle,
        kids: &[Node],
        at: usize,
        path: &str,
    ) -> Result<Option<usize>, String> {
        match p {
            Particle::Element { decl, .. } => self.one_element(decl, kids, at, path),
            Particle::Ref { name, .. } => {
                let decl = self
                    .elements
                    .get(name)
                    .ok_or_else(|| format!("ref to undeclared element {name:?}"))?;
                self.one_element(decl, kids, at, path)
            }
            Particle::Sequence { items, .. } => {
                let mut pos = at;
                for item in items {
                    pos = self.particle(item, kids, pos, path)?;
                }
                Ok(Some(pos))
            }
            Particle::Choice { items, .. } => {
                for item in items {
                    if let Some(next) = self.once(item, kids, at, path)? {
                        return Ok(Some(next));
                    }
                }
                Ok(None)
            }
        }
    }

    fn one_element(
        &self,
        decl: &Element,
        kids: &[Node],
        at: usize,
        path: &str,
    ) -> Result<Option<usize>, String> {
        match kids.get(at) {
            Some(k) if k.tag_name().name() == decl.name && k.tag_name().namespace().is_none() => {
                self.element(decl, *k, &format!("{path}/{}[{}]", decl.name, at + 1))?;
                Ok(Some(at + 1))
            }
            _ => Ok(None),
        }
    }
}

fn describe(p: &Particle) -> String {
    match p {
        Particle::Element { decl, .. } => format!("<{}>", decl.name),
        Particle::Ref { name, .. } => format!("<{name}>"),
        Particle::Sequence { items, .. } | Particle::Choice { items, .. } => {
            items.iter().map(describe).collect::<Vec<_>>().join(" or ")
        }
    }
}

fn parse_element(n: Node) -> Result<Element, String> {
    allowed_attrs(n, &["name", "type", "minOccurs", "maxOccurs"])?;
    let name = n
        .attribute("name")
        .ok_or("xs:element needs a name")?
        .to_string();
    let kids = xs_children(n)?;
    let ty = match (n.attribute("type"), kids.as_slice()) {
        (Some(t), []) => ElementType::Named(t.to_string()),
        (None, [c]) if c.tag_name().name() == "complexType" => {
            ElementType::Complex(parse_complex(*c)?)
        }
        _ => {
            return Err(format!(
                "element {name:?}: give a type or one xs:complexType"
            ))
        }
    };
    Ok(Element { name, ty })
}

fn parse_complex(n: Node) -> Result<ComplexType, String> {
    allowed_attrs(n, &["name"])?;
    let mut content = Content::Elements(None);
    let mut attributes = Vec::new();
    for c in xs_children(n)? {
        match c.tag_name().name() {
            "sequence" | "choice" => content = Content::Elements(Some(parse_particle(c)?)),
            "attribute" => attributes.push(parse_attribute(c)?),
            "simpleContent" => {
                let ext = xs_children(c)?;
                let [e] = ext.as_slice() else {
                    return Err("xs:simpleContent needs one xs:extension".into());
                };
                if e.tag_name().name() != "extension" {
                    return Err("only xs:extension is supported in xs:simpleContent".into());
                }
                allowed_attrs(*e, &["base"])?;
                content = Content::Simple(
                    e.attribute("base")
                        .ok_or("xs:extension needs a base")?
                        .into(),
                );
                for a in xs_children(*e)? {
                    if a.tag_name().name() != "attribute" {
                        return Err("only attributes inside xs:extension".into());
                    }
                    attributes.push(parse_attribute(a)?);
                }
            }
            other => return Err(format!("unsupported xs:{other} in xs:complexType")),
        }
    }
    Ok(ComplexType {
        content,
        attributes,
    })
}

fn parse_particle(n: Node) -> Result<Particle, String> {
    let (min, max) = occurs(n)?;
    match n.tag_name().name() {
        "element" => {
            if let Some(r) = n.attribute("ref") {
                allowed_attrs(n, &["ref", "minOccurs", "maxOccurs"])?;
                return Ok(Particle::Ref {
                    name: r.into(),
                    min,
                    max,
                });
            }
            Ok(Particle::Element {
                decl: Box::new(parse_element(n)?),
                min,
                max,
            })
        }
        kind @ ("sequence" | "choice") => {
            allowed_attrs(n, &["minOccurs", "maxOccurs"])?;
            let items = xs_children(n)?
                .into_iter()
                .map(parse_particle)
                .collect::<Result<Vec<_>, _>>()?;
            Ok(if kind == "sequence" {
                Particle::Sequence { items, min, max }
            } else {
                Particle::Choice { items, min, max }
            })
        }
        other => Err(format!("unsupported xs:{other} in a content model")),
    }
}

fn parse_attribute(n: Node) -> Result<Attribute, String> {
    allowed_attrs(n, &["name", "type", "use"])?;
    let required = match n.attribute("use") {
        None | Some("optional") => false,
        Some("required") => true,
        Some(u) => return Err(format!("attribute use {u:?}")),
    };
    let ty = n.attribute("type").unwrap_or("xs:string").to_string();
    if !BUILT_IN.contains(&ty.as_str()) {
        return Err(format!("unsupported type {ty}"));
    }
    Ok(Attribute {
        name: n
            .attribute("name")
            .ok_or("xs:attribute needs a name")?
            .into(),
        ty,
        required,
    })
}

/// The built-in simple types this validator knows.
const BUILT_IN: &[&str] = &[
    "xs:string",
    "xs:decimal",
    "xs:nonNegativeInteger",
    "xs:positiveInteger",
    "xs:dateTime",
];

/// Checks `value` against a built-in simple type.
fn simple(ty: &str, value: &str) -> Result<(), String> {
    let v = value.trim();
    let ok = match ty {
        "xs:string" => true,
        "xs:decimal" => {
            let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
            let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
            !(int.is_empty() && frac.is_empty())
                && int.chars().all(|c| c.is_ascii_digit())
                && frac.chars().all(|c| c.is_ascii_digit())
        }
        "xs:nonNegativeInteger" => !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()),
        "xs:positiveInteger" => {
            !v.is_empty()
                && v.chars().all(|c| c.is_ascii_digit())
                && !v.trim_start_matches('0').is_empty()
        }
        "xs:dateTime" => {
            let b = v.as_bytes();
            b.len() >= 19
                && b[4] == b'-'
                && b[7] == b'-'
                && b[10] == b'T'
                && b[13] == b':'
                && b[16] == b':'
                && [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
                    .iter()
                    .all(|&i| b[i].is_ascii_digit())
        }
        other => return Err(format!("unsupported type {other}")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{value:?} is not a valid {ty}"))
    }
}
