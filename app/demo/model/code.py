"""The code blocks of the demo model's answers: a function named after what the request wants
done, in a small program of the language asked for (Python when none is)."""

from __future__ import annotations

import re

from ..phrasing import plain, shorten
from .formats import FORMAT_WORDS, LANGUAGE_NAMES

_CODE_WORDS_TEXT = """
    write code function script snippet program implement example that the and with for some
    please small simple quick can you which from into this give show make block class using
    hello thanks
"""
_CODE_WORDS = frozenset(_CODE_WORDS_TEXT.split())


def code_name(text: str) -> str:
    """A function name from what the code should do ("…to convert yen to euros")."""
    match = re.search(r"\b(?:to|that|which|for)\s+(.+)$", text, re.IGNORECASE)
    source = match.group(1) if match else text
    words = [
        w for w in re.findall(r"[a-z]+", source.lower())
        if w not in _CODE_WORDS and w not in LANGUAGE_NAMES and w not in FORMAT_WORDS
        and len(w) > 2
    ][:3]
    return "_".join(words) or "greet"


def code_block(text: str, lang: str) -> str:
    """A fenced block of ``lang`` code for ``text``."""
    return f"```{lang}\n{code_template(lang, code_name(text), shorten(plain(text), 48))}\n```"


def code_template(lang: str, name: str, request: str) -> str:
    """A small, runnable-looking program in ``lang`` around a function called ``name``."""
    request = request.replace('"', "'").replace("*/", "* /")
    camel = name.split("_")[0] + "".join(p.capitalize() for p in name.split("_")[1:])
    pascal = camel[:1].upper() + camel[1:]
    templates = {
        "javascript": (
            f"// {request}\nfunction {camel}(text) {{\n"
            "  const words = text.split(/\\s+/).filter(Boolean);\n"
            '  return words.map((w) => w[0].toUpperCase() + w.slice(1)).join(" ");\n}\n\n'
            f'console.log({camel}("hello from coco"));'
        ),
        "typescript": (
            f"// {request}\nfunction {camel}(text: string): string {{\n"
            "  const words = text.split(/\\s+/).filter(Boolean);\n"
            '  return words.map((w) => w[0].toUpperCase() + w.slice(1)).join(" ");\n}\n\n'
            f'console.log({camel}("hello from coco"));'
        ),
        "rust": (
            f"/// {request}\nfn {name}(text: &str) -> String {{\n"
            "    text.split_whitespace()\n        .map(|w| w.to_uppercase())\n"
            '        .collect::<Vec<_>>()\n        .join(" ")\n}\n\n'
            f'fn main() {{\n    println!("{{}}", {name}("hello from coco"));\n}}'
        ),
        "go": (
            f'// {request}\npackage main\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\n'
            f"func {camel}(text string) string {{\n\treturn strings.ToUpper(text)\n}}\n\n"
            f'func main() {{\n\tfmt.Println({camel}("hello from coco"))\n}}'
        ),
        "bash": (
            f"#!/usr/bin/env bash\n# {request}\nset -euo pipefail\n\n{name}() {{\n"
            '  local text="$1"\n  echo "${text^^}"\n}\n\n'
            f'{name} "hello from coco"'
        ),
        "sql": (
            f"-- {request}\nSELECT id, name, created_at\nFROM items\n"
            "WHERE name LIKE '%coco%'\nORDER BY created_at DESC\nLIMIT 10;"
        ),
        "java": (
            f"// {request}\npublic class {pascal} {{\n"
            f"    static String {camel}(String text) {{\n"
            "        return text.trim().toUpperCase();\n    }\n\n"
            "    public static void main(String[] args) {\n"
            f'        System.out.println({camel}("hello from coco"));\n    }}\n}}'
        ),
        "kotlin": (
            f"// {request}\nfun {camel}(text: String): String =\n"
            '    text.split(" ").joinToString(" ") { it.replaceFirstChar(Char::uppercase) }\n\n'
            f'fun main() {{\n    println({camel}("hello from coco"))\n}}'
        ),
        "swift": (
            f"// {request}\nfunc {camel}(_ text: String) -> String {{\n"
            "    text.capitalized\n}\n\n"
            f'print({camel}("hello from coco"))'
        ),
        "ruby": (
            f"# {request}\ndef {name}(text)\n"
            "  text.split.map(&:capitalize).join(' ')\nend\n\n"
            f"puts {name}('hello from coco')"
        ),
        "php": (
            f"<?php\n// {request}\nfunction {camel}(string $text): string\n{{\n"
            "    return ucwords($text);\n}\n\n"
            f"echo {camel}('hello from coco'), PHP_EOL;"
        ),
        "csharp": (
            f"// {request}\nusing System;\nusing System.Globalization;\n\n"
            f"static string {pascal}(string text) =>\n"
            "    CultureInfo.InvariantCulture.TextInfo.ToTitleCase(text);\n\n"
            f'Console.WriteLine({pascal}("hello from coco"));'
        ),
        "cpp": (
            f"// {request}\n#include <cctype>\n#include <iostream>\n#include <string>\n\n"
            f"std::string {name}(std::string text) {{\n"
            "    for (char &c : text) c = static_cast<char>(std::toupper(c));\n"
            "    return text;\n}\n\n"
            f'int main() {{\n    std::cout << {name}("hello from coco") << "\\n";\n}}'
        ),
        "c": (
            f"/* {request} */\n#include <ctype.h>\n#include <stdio.h>\n\n"
            f"void {name}(char *text) {{\n"
            "    for (; *text; text++) *text = (char)toupper((unsigned char)*text);\n}\n\n"
            'int main(void) {\n    char text[] = "hello from coco";\n'
            f'    {name}(text);\n    puts(text);\n    return 0;\n}}'
        ),
        "html": (
            f"<!-- {request} -->\n<!doctype html>\n<html lang=\"en\">\n<head>\n"
            '  <meta charset="utf-8">\n  <title>Hello from Coco</title>\n</head>\n<body>\n'
            "  <h1>Hello from Coco</h1>\n  <p>A small page to start from.</p>\n</body>\n</html>"
        ),
        "css": (
            f"/* {request} */\nbody {{\n  font-family: system-ui, sans-serif;\n"
            "  margin: 2rem auto;\n  max-width: 40rem;\n}\n\nh1 {\n  color: #2b6cb0;\n}"
        ),
        "json": (
            '{\n  "name": "coco",\n  "request": "' + request + '",\n'
            '  "items": [1, 2, 3],\n  "enabled": true\n}'
        ),
        "yaml": (
            f"# {request}\nname: coco\nitems:\n  - one\n  - two\nenabled: true"
        ),
        "toml": (
            f'# {request}\nname = "coco"\nitems = [1, 2, 3]\n\n[options]\nenabled = true'
        ),
    }
    if lang in templates:
        return templates[lang]
    return (
        f'def {name}(text: str) -> str:\n    """{request}"""\n'
        "    words = text.split()\n"
        '    return " ".join(word.capitalize() for word in words)\n\n\n'
        f'if __name__ == "__main__":\n    print({name}("hello from coco"))'
    )
