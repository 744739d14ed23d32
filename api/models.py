"""Request and response models of the HTTP API, kept apart.

Request models validate (and bound) what clients send. Response models document the answers in the
OpenAPI schema; routes hand the core's JSON straight to the response without re-validating it (the
tests check that real answers fit these models).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from explainer.textio import valid_unicode

MAX_TEXT_CHARS = 1 << 20  # the request body is capped at 1 MiB anyway; this bounds direct use
MAX_TOP = 10
MAX_QUERY_CHARS = 1000

Lang = Literal["en", "zh", "both", "auto"]
Format = Literal["markdown", "html"]
FORMATS: tuple[Format, ...] = ("markdown", "html")
SearchLang = Literal["en", "zh", "both"]


class ExplainRequest(BaseModel):
    """A pasted traceback (or any text holding one) to explain."""

    model_config = ConfigDict(extra="forbid")  # a misspelled key is an error, not silently ignored

    text: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_TEXT_CHARS,
            strict=True,
            description="The paste: a traceback, a log tail, a notebook cell's output.",
        ),
    ]
    lang: Lang = Field(
        "auto", description="Language of the answer; `auto` follows the paste, then the Accept-Language header."
    )
    top: Annotated[
        int,
        Field(
            ge=1,
            le=MAX_TOP,
            strict=True,
            description="At most this many matches (an integer; `10.0` is the integer 10, as JSON Schema reads it).",
        ),
    ] = 3

    render: list[Format] = Field(
        default_factory=lambda: list(FORMATS),
        max_length=2,
        description="The formats each match's `rendered` holds (and `raised_at_rendered`); `[]` leaves them out: "
        "a client that shows the JSON's own fields does not wait for rendering.",
    )

    @field_validator("top", mode="before")
    @classmethod
    def _integral_number_is_an_integer(cls, v: object) -> object:
        # The published schema says `"type": "integer"`, and JSON Schema counts 10.0 as an integer:
        # accept it as 10, as the schema promises. 2.5, true, "3", NaN stay invalid (strict int).
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v

    @field_validator("text", mode="before")
    @classmethod
    def _no_lone_surrogates(cls, v: object) -> object:
        # JSON may carry "\ud800" (a browser's JSON.stringify writes one for a lone surrogate): a str
        # Python holds but cannot encode as UTF-8. Replace it, as the CLI does with undecodable bytes.
        return valid_unicode(v) if isinstance(v, str) else v


# --- responses -------------------------------------------------------------------------------


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")  # keys may be added (INTERFACES.md)


class FrameOut(_Open):
    file: str | None
    line: int | None
    function: str | None
    code: str | None = None
    library: bool = False


class UserFrameOut(_Open):
    file: str | None
    line: int | None
    function: str | None
    code: str | None = None


class LinkOut(_Open):
    exc_type: str | None
    message: str | None
    relation: str


class SignalOut(_Open):
    kind: str
    text: str


class OtherOut(_Open):
    exc_type: str | None
    message: str | None


class ParsedOut(_Open):
    exc_type: str | None
    message: str | None
    frames: list[FrameOut]
    chain: list[LinkOut]
    user_frame: UserFrameOut | None
    signals: list[SignalOut]
    others: list[OtherOut]
    format: str


class RenderedPart(_Open):
    markdown: str | None = None
    html: str | None = Field(None, description="Rendered from Markdown with raw HTML off: safe to insert as HTML.")


class RenderedOut(_Open):
    markdown: str | None = Field(None, description="The whole answer for this match (when `render` asks for it).")
    html: str | None = Field(
        None,
        description="Rendered from Markdown with raw HTML off: safe to insert as HTML (when `render` asks for it).",
    )
    short: RenderedPart = Field(
        description="The short answer (where, summary, the cause the paste points to, the best fix) without the title line."
    )
    rest: RenderedPart = Field(description="The rest of the whole answer: why, every cause and fix, checks, docs.")


class MatchOut(_Open):
    id: str
    score: float = Field(ge=0, le=1, description="Calibrated confidence.")
    title: str
    reasons: list[str]
    captures: dict[str, str]
    rendered: RenderedOut | None = Field(None, description="Left out when the request's `render` is `[]`.")


class NearestOut(_Open):
    id: str
    score: float


class ExplainResponse(_Open):
    parsed: ParsedOut
    matches: list[MatchOut] = Field(description="Best first; empty when the explainer abstains.")
    abstained: bool = False
    ambiguous: bool = False
    nearest: list[NearestOut] | None = None
    lang: Literal["en", "zh", "both"] = Field(description="The language the answer was rendered in.")


class EntrySummary(_Open):
    id: str
    category: str | None
    kind: str | None
    title_en: str
    title_zh: str


class EntriesResponse(BaseModel):
    entries: list[EntrySummary]


class EntryResponse(_Open):
    """The full entry: titles, summary, explanation, causes and fixes in both languages, docs."""

    id: str
    title: dict[str, str]
    category: str | None = None
    kind: str | None = None


class SearchResult(_Open):
    id: str
    title: str
    score: float
    snippet: str
    lang: str | None = None


class SearchResponse(BaseModel):
    results: list[SearchResult]


class HealthResponse(BaseModel):
    status: Literal["ok"]
    entries: int


class ErrorDetail(_Open):
    code: str = Field(description="Stable machine-readable code, e.g. not_found, body_too_large, invalid_request.")
    message: str


class ErrorResponse(BaseModel):
    error: ErrorDetail
