"""Everything the source form shows, generated from the ACP's capability (5.5, 6.3, 7, 8.7): no ACP-specific code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..catalog import AcpEntry, Capability
from ..drafts import Draft
from ..forms.display import reference_note, show_defaults, show_stored, show_submitted
from ..forms.fields import Field, Variant, build_variants, make_field, matching_variant
from ..forms.submit import chosen_variant, is_reference

KEPT = "Kept for this form; leave empty to keep it."
LIMITS = {
    "row_limit": {"type": "integer", "title": "Rows the model sees", "minimum": 0, "maximum": 5000,
                  "description": "Rows of each result the model gets (0-5000); the dataset always keeps the full table."},
    "field_limit": {"type": "integer", "title": "Fields per row", "minimum": 1, "maximum": 200,
                    "description": "Fields per row of a multi-table result the model gets (1-200)."},
    "cost_limit_usd": {"type": "number", "title": "Cost limit (USD)", "minimum": 0,
                       "description": "The most one call may cost; a query estimated above it is refused before it runs."},
}


@dataclass
class SourceForm:
    """The source form of one ACP: identity, credentials, config, limits, resource, blocks and tables."""

    acp: AcpEntry
    capability: Capability
    draft: Draft
    editing: str | None
    stored: dict[str, Any] = field(default_factory=dict)  # the entry as in sources.json (edit)
    credentials: list[Variant] = field(default_factory=list)
    config: list[Variant] = field(default_factory=list)
    limits: list[Field] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    problem: str | None = None  # the validator's verdict when a save was refused
    confirm_cost: str | None = None  # the raised cost limit waiting for confirmation
    blocks: list[dict[str, Any]] = field(default_factory=list)  # {"id", "description", "checked"}
    tables: list[dict[str, Any]] = field(default_factory=list)  # {"group", "entries": [...]}

    @property
    def cap(self) -> dict[str, Any]:
        """The ACP's experimental.acp capability."""
        return self.capability.acp

    @property
    def resource(self) -> dict[str, Any]:
        """resource_id metadata (6)."""
        rid = self.cap.get("resource_id")
        return rid if isinstance(rid, dict) else {}

    @property
    def needs_resource(self) -> bool:
        """14.3: required unless no tool publishes resource_id."""
        return self.capability.needs_resource and self.resource.get("format") != "none"

    def signed_in(self, variant: Variant) -> str | None:
        """Who the variant's sign-in is for: this form's sign-in, else the stored one's account (never a token)."""
        if self.draft.signin_variant == variant.index and self.draft.signed_in_as:
            return self.draft.signed_in_as
        stored = self.stored.get("credentials")
        schema = self.cap.get("credentials_schema")
        if variant.selected and isinstance(stored, dict) and matching_variant(schema, stored) == variant.index:
            email = stored.get("email")
            return email if isinstance(email, str) and email else None
        return None

    @property
    def stored_whole_reference(self) -> str | None:
        """The stored credentials when they are one reference (a file, a variable), in words."""
        stored = self.stored.get("credentials")
        if isinstance(stored, dict) and is_reference(stored):
            return reference_note(stored).split(";")[0].lower()
        return None

    def value(self, name: str, default: Any = "") -> Any:
        """A plain input's value: what the draft holds once the form was submitted, else ``default`` (the stored one)."""
        if self.draft.values:
            return self.draft.values.get(name, "")
        return default


def _schema(cap: dict[str, Any], key: str) -> dict[str, Any] | None:
    schema = cap.get(key)
    return schema if isinstance(schema, dict) else None


def _variants(form: SourceForm, key: str) -> list[Variant]:
    schema = _schema(form.cap, f"{key}_schema")
    variants = build_variants(schema, key)
    show_defaults(variants)
    stored = form.stored.get(key)
    if form.draft.values:
        chosen = chosen_variant(key, form.draft.get, len(variants))
        show_submitted(variants, chosen, form.draft.get, form.errors, stored, schema)
    else:
        show_stored(variants, schema, stored)
    for v in variants:
        for f in v.fields:
            if f.name in form.draft.secrets and not f.saved:
                f.saved, f.saved_note = True, KEPT
    return variants


def _limits(form: SourceForm) -> list[Field]:
    raw = form.cap.get("defaults")
    defaults: dict[str, Any] = raw if isinstance(raw, dict) else {}
    out = []
    for key, prop in LIMITS.items():
        f = make_field(key, prop, f"limits.{key}", False)
        if key in defaults:
            f.placeholder = f"{defaults[key]:g}" if isinstance(defaults[key], float) else str(defaults[key])
        name = f"limits.{key}"
        if form.draft.values:
            f.value = form.draft.values.get(name, "")
        elif key in form.stored:
            f.value = f"{form.stored[key]:g}" if isinstance(form.stored[key], float) else str(form.stored[key])
        f.error = form.errors.get(name)
        out.append(f)
    return out


def _blocks(form: SourceForm, catalog: list[dict[str, Any]]) -> list[dict[str, Any]]:
    chosen = form.draft.lists.get("blocks") if form.draft.values else form.stored.get("autocontext_blocks")
    return [{"id": b["id"], "description": b.get("description") or "",
             "checked": chosen is None or b["id"] in chosen} for b in catalog]


def _tables(form: SourceForm) -> list[dict[str, Any]]:
    catalog = form.cap.get("table_catalog")
    if not isinstance(catalog, list) or not catalog:
        return []
    defaults = (form.cap.get("defaults") or {}).get("tables")
    chosen = form.draft.lists.get("tables") if form.draft.values else form.stored.get("tables", defaults)
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in catalog:
        if not isinstance(entry, dict) or not entry.get("name"):
            continue
        required = bool(entry.get("required"))
        groups.setdefault(str(entry.get("group") or "Tables"), []).append({
            "name": entry["name"], "title": entry.get("title") or entry["name"], "description": entry.get("description"),
            "required": required, "checked": required or chosen is None or entry["name"] in chosen,
        })
    return [{"group": g, "entries": e} for g, e in groups.items()]


def build(acp: AcpEntry, capability: Capability, draft: Draft, stored: dict[str, Any] | None,
          block_catalog: list[dict[str, Any]], errors: dict[str, str] | None = None) -> SourceForm:
    """The whole form, as it should show now."""
    form = SourceForm(acp=acp, capability=capability, draft=draft, editing=draft.editing, stored=stored or {},
                      errors=dict(errors or {}))
    form.credentials = _variants(form, "credentials")
    form.config = _variants(form, "config")
    form.limits = _limits(form)
    form.blocks = _blocks(form, block_catalog)
    form.tables = _tables(form)
    return form
