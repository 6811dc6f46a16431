"""A rule-based PII extractor: the baseline a model has to beat (chapter 04).

`extract(text)` finds candidates with regular expressions (numbers, e-mails,
dates next to a birth-date keyword, addresses) and small dictionaries
(relationship words, Korean surnames, name cues such as "성명:" or "Dear"), and
`baseline_output(text)` writes them exactly as the model does: ``TYPE<TAB>VALUE``
rows in order of first appearance. So the whole pipeline (parse, mask, restore,
evaluate) runs for real without a model.

How it was built: from general knowledge of Korean and US formats (mobile
prefixes, RRN shape, card groupings, address words), written before looking at
any evaluation score and never adjusted against the test split. It is reported
as it scores.

What it cannot do, on purpose: understand context. It will mask a company
switchboard that looks like a personal phone, miss a name that no cue
introduces, and take any 13-digit ``YYMMDD-NNNNNNN`` for an RRN. Those misses and
false alarms are what the course's model is meant to fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from piilab.labels import LABELS

__all__ = ["RULES", "Rule", "baseline_output", "extract", "rule_spans"]


@dataclass(frozen=True)
class Rule:
    """One extraction rule: a compiled pattern whose group `group` is the value."""

    label: str
    pattern: re.Pattern[str]
    group: int | str = 0


_D = r"(?<![\d])"  # no digit just before
_ND = r"(?![\d])"  # no digit just after
_MONTHS = ("January|February|March|April|May|June|July|August|September|October|"
           "November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
_DATE = (rf"(?:\d{{4}}년\s?\d{{1,2}}월\s?\d{{1,2}}일|\d{{4}}[-./]\d{{1,2}}[-./]\d{{1,2}}|"
         rf"\d{{1,2}}/\d{{1,2}}/\d{{4}}|(?:{_MONTHS})\.? \d{{1,2}}, \d{{4}})")

# Common Korean surnames (two-syllable ones first so they win).
_KO_SURNAMES = ("남궁|선우|제갈|독고|황보|사공|서문|김|이|박|최|정|강|조|윤|장|임|한|오|서|신|권|황|안|"
                "송|류|유|전|홍|고|문|양|손|배|백|허|남|심|노|하|곽|성|차|주|우|구|민|진|나|지|엄|채|원")
# Words after which a Korean name is typically written, and honorifics after it.
_KO_NAME_CUES = ("성명|이름|성함|환자명|회원명|고객명|예금주|명의자|신청자|수령인|받는 분|보호자 성명|"
                 "피보험자|본회원|가족회원|등록명|사원|고객|환자|담당자")
_KO_HONORIFICS = "님|씨|고객|사원|환자|회원"

_KO_REL = ("할아버지|할머니|어머니|아버지|엄마|아빠|남편|아내|배우자|아들|딸|형|오빠|언니|누나|"
           "남동생|여동생|동생|손자|손녀|삼촌|이모|고모|시어머니|장인|장모|사위|며느리")
_EN_REL = "husband|wife|mother|father|mom|dad|son|daughter|sister|brother|spouse|partner|" \
          "grandmother|grandfather|aunt|uncle"

# Rules whose pattern starts with a run of one character class ("[A-Za-z0-9._%+-]+@",
# "[가-힣]+특별시") are written to start only where such a run starts (a lookbehind):
# tried at every position of a long run, the plain pattern scans the rest of the run
# each time, and a 80 KB run of letters took seconds. A match of the plain pattern
# starts at the beginning of its run anyway, or where the previous match ended
# (`_finditer` tries that position too), so the matches are the same.
_EMAIL_LOCAL = "A-Za-z0-9._%+-"
_HANGUL = "가-힣"

RULES: tuple[Rule, ...] = (
    Rule("EMAIL", re.compile(rf"(?<![{_EMAIL_LOCAL}])[{_EMAIL_LOCAL}]+@[A-Za-z0-9-]+"
                             r"(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")),
    # Korean RRN shape: YYMMDD-GNNNNNN with G in 1-4 (the check digit is not verified).
    Rule("RRN", re.compile(rf"{_D}\d{{2}}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-?[1-4]\d{{6}}{_ND}")),
    # Card numbers: 4-4-4-4 (space, hyphen or none) and 4-6-5 (15 digits).
    Rule("CARD", re.compile(rf"{_D}(?:\d{{4}}([ -]?)\d{{4}}\1\d{{4}}\1\d{{4}}|\d{{4}} \d{{6}} \d{{5}}){_ND}")),
    # Phones: Korean mobiles, US numbers with an area code, and
    # US local numbers without one (exchange 2-9XX, a hyphen, four digits: 555-0142).
    Rule("PHONE", re.compile(rf"{_D}01[016789][-. ]?\d{{3,4}}[-. ]?\d{{4}}{_ND}")),
    Rule("PHONE", re.compile(rf"(?:\+1 )?(?:\(\d{{3}}\) |(?<![\d-])\d{{3}}[-. ])\d{{3}}[-. ]\d{{4}}{_ND}")),
    Rule("PHONE", re.compile(r"(?<![\d.-])[2-9]\d{2}-\d{4}(?![\d-])")),
    # Accounts: a digit group right after an account keyword.
    Rule("ACCOUNT", re.compile(
        r"(?:계좌(?:번호)?|입금 계좌|account(?: number| no\.?)?)[:\s]*(?P<v>\d[\d-]{6,}\d)(?![\d])",
        re.IGNORECASE), "v"),
    # Dates of birth: a date right after a birth-date keyword.
    Rule("DOB", re.compile(
        rf"(?:생년월일|생일|DOB|[Dd]ate of birth|[Bb]irth ?date|born(?: on)?)\W{{0,4}}(?:확인\W{{0,3}})?"
        rf"(?P<v>{_DATE})"), "v"),
    # Korean road-name addresses and US street addresses.
    Rule("ADDRESS", re.compile(
        rf"(?<![{_HANGUL}])"
        r"(?:[가-힣]+(?:특별시|광역시|특별자치시|도)\s)(?:[가-힣]+시\s)?[가-힣]+[구군]\s[가-힣0-9]+(?:로|길)\s\d+"
        r"(?:-\d+)?(?:,\s?\d+동\s?\d+호)?")),
    Rule("ADDRESS", re.compile(
        r"\d{1,5} [A-Z][a-z]+(?: [A-Z][a-z]+)? (?:Street|St\.|Avenue|Ave\.|Road|Rd\.|Lane|Ln\.|"
        r"Drive|Dr\.|Court|Ct\.|Boulevard|Blvd\.)(?:, (?:Apt|Suite|Unit) \w+)?, "
        r"[A-Z][a-z]+(?: [A-Z][a-z]+)?, [A-Z]{2} \d{5}(?:-\d{4})?")),
    # Korean names: a cue word, then surname + 1-2 syllables; or surname + syllables + honorific.
    Rule("PERSON", re.compile(
        rf"(?:{_KO_NAME_CUES})\s?:?\s?(?P<v>(?:{_KO_SURNAMES})[가-힣]{{1,2}})(?![가-힣])"), "v"),
    Rule("PERSON", re.compile(
        rf"(?<![가-힣])(?P<v>(?:{_KO_SURNAMES})[가-힣]{{2}})\s?(?:{_KO_HONORIFICS})"), "v"),
    # English names: a cue, then two capitalized words.
    Rule("PERSON", re.compile(
        r"(?:Name:|Hi|Hello|Dear|Mr\.|Ms\.|Mrs\.|Dr\.|[Cc]ustomer|[Cc]aller|[Rr]ecipient|Insured:|"
        r"member|hire|for|from|contact:)\s(?P<v>[A-Z][a-z]+ [A-Z][a-z]+)\b"), "v"),
    # Relationship words.
    Rule("REL", re.compile(rf"(?:{_KO_REL})(?=(?:의|에게|께|가|이|는|은|를|을|와|과|\s|$|[,.)]))")),
    Rule("REL", re.compile(rf"\b(?:my|My|her|his|their) (?:{_EN_REL})\b")),
    Rule("REL", re.compile(rf"(?<=\()(?:{_EN_REL})(?=\))")),
)

assert {r.label for r in RULES} == set(LABELS)

#: The rules written with a run-start lookbehind, and the pattern without it.
_RUN_START = {id(rule.pattern): re.compile(rule.pattern.pattern.split(")", 1)[1])
              for rule in RULES if rule.pattern.pattern.startswith("(?<![")}


def _finditer(rule: Rule, text: str):
    """The matches of `rule` in `text`, as ``rule.pattern.finditer`` of the plain pattern.

    A pattern written to start only at the beginning of a run (see `RULES`)
    misses a match that the plain pattern finds where the previous match ended
    in the middle of a run; that one position is tried with the plain
    pattern. Each try scans one run at most once, so the whole is linear.
    """
    plain = _RUN_START.get(id(rule.pattern))
    if plain is None:
        yield from rule.pattern.finditer(text)
        return
    position = 0
    while position <= len(text):
        match = (plain.match(text, position) if position else None) or \
            rule.pattern.search(text, position)
        if match is None:
            return
        yield match
        position = match.end() if match.end() > match.start() else match.end() + 1


def rule_spans(text: str) -> list[tuple[int, int, str]]:
    """The rules' matches as disjoint ``(start, end, label)`` spans, in text order.

    Where matches of different rules overlap, the longer one wins and then the
    earlier rule, so a card number is not also reported as a phone number.

    >>> rule_spans("고객 김가상 님, 연락처 010-0123-4567")
    [(3, 6, 'PERSON'), (14, 27, 'PHONE')]
    """
    found: list[tuple[int, int, int, str]] = []
    for order, rule in enumerate(RULES):
        for m in _finditer(rule, text):
            start, end = m.span(rule.group)
            if end > start:
                found.append((start, -(end - start), order, rule.label))
    found.sort()
    # The kept matches are sorted by start and disjoint, so a candidate overlaps one of
    # them exactly when it starts before the end of the last one: one comparison each.
    taken_end = 0
    spans: list[tuple[int, int, str]] = []
    for start, neg_len, _, label in found:
        if start < taken_end:
            continue
        taken_end = start - neg_len
        spans.append((start, taken_end, label))
    return spans


def extract(text: str) -> list[tuple[str, str]]:
    """The ``(type, value)`` pairs the rules find, unique, in order of first appearance
    (the text of each of `rule_spans`).

    >>> extract("고객 김가상 님, 연락처 010-0123-4567")
    [('PERSON', '김가상'), ('PHONE', '010-0123-4567')]
    """
    pairs = {(label, text[start:end]): None for start, end, label in rule_spans(text)}
    return list(pairs)


def baseline_output(text: str) -> str:
    """Model-style output: one ``TYPE<TAB>VALUE`` row per extracted pair ("" if none)."""
    return "\n".join(f"{label}\t{value}" for label, value in extract(text))
