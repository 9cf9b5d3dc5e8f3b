"""Is a document valid against a JSON schema? A yes/no answer for the small
part of JSON Schema (2020-12) that schemas/manifest.v1.schema.json uses,
without importing jsonschema (about a tenth of a second: the gate reads a
few manifests and most are valid).

The answer is "valid" only when jsonschema would find no error; anything else
(an error, or a keyword or type this module does not know) is "ask
jsonschema", which then names every error. A test holds it to jsonschema's
verdict on valid and broken manifests.
"""

from __future__ import annotations

import re

ANNOTATIONS = {"$schema", "$id", "title", "description", "$comment"}
KNOWN = ANNOTATIONS | {"type", "required", "additionalProperties", "properties", "pattern", "minimum",
                       "enum", "items", "minLength", "minItems"}


def _is_type(value, name: str) -> bool | None:
    """jsonschema's types (an integral float is an integer, a bool is no number)."""
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return None


def valid(value, schema: dict) -> bool:
    """True only when VALUE surely satisfies SCHEMA; False means "not sure"."""
    if not isinstance(schema, dict) or set(schema) - KNOWN:
        return False
    if "type" in schema and not _is_type(value, schema["type"]):
        return False
    if "enum" in schema and not any(type(value) is type(e) and value == e for e in schema["enum"]):
        return False
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return False
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            return False
    if _is_type(value, "number") and "minimum" in schema and not value >= schema["minimum"]:
        return False
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return False
        if "items" in schema and not all(valid(v, schema["items"]) for v in value):
            return False
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        if any(k not in value for k in schema.get("required", ())):
            return False
        if schema.get("additionalProperties", True) is not True and any(k not in properties for k in value):
            return False
        if not all(valid(v, properties[k]) for k, v in value.items() if k in properties):
            return False
    return True
