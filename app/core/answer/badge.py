"""A citation's two checks in words, the same on every surface (the CLI, the window's card,
the Markdown and PDF exports): were the quoted words found on the page (citations.verify),
and does the quote back the answer's claim (support.supports)? Found is not the same as
supporting (issue 19), so the two are said apart."""
from __future__ import annotations

from dataclasses import dataclass

VERIFIED, UNVERIFIED = "verified", "UNVERIFIED"
SUPPORTS, NOT_SUPPORTS = "supports the answer", "does not obviously support the answer"


@dataclass(frozen=True)
class Badge:
    verified: bool                # the quoted words are on the cited page
    support: str                  # "supports" | "unclear" | "contradicts"; "" when not checked
    checked: str = ""             # what was checked, in words ("quote found on p. 7")

    @classmethod
    def of(cls, citation) -> Badge:
        """A Citation's badge, or that of its dict (an answer's JSON: exports, stored answers)."""
        if isinstance(citation, dict):
            return cls(bool(citation.get("verified")), str(citation.get("support") or ""),
                       str(citation.get("checked") or ""))
        return cls(bool(citation.verified), getattr(citation, "support", "") or "", getattr(citation, "checked", ""))

    @property
    def supports(self) -> bool:
        """The quote is on its page and backs the answer (an unverified quote backs nothing)."""
        return self.verified and self.support == "supports"

    @property
    def mark(self) -> str:
        return "✓" if self.verified else "⚠"

    def label(self) -> str:
        """The window's card: "✓ quote found on p. 7", "⚠ quote too short to check"."""
        return f"{self.mark} {self.checked or (VERIFIED if self.verified else UNVERIFIED.lower())}"

    def support_words(self) -> str:
        """The second check, for the card: "supports the answer" or "does not obviously support the answer"."""
        return SUPPORTS if self.supports else NOT_SUPPORTS

    def text(self, with_support: bool = True) -> str:
        """Plain text: "verified", "UNVERIFIED", "verified; does not obviously support the answer"
        (the second part only where the support check ran and did not find support)."""
        if not self.verified:
            return UNVERIFIED
        if with_support and self.support and self.support != "supports":
            return f"{VERIFIED}; {NOT_SUPPORTS}"
        return VERIFIED
