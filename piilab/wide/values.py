"""Value generators of the wide corpus: many spellings of every label (chapter 02).

Each generator takes ``(rng, lang, ctx)`` and returns the value exactly as it is written in
the document. Numbers are invalid by construction as in the default corpus
(`piilab.checksums`: RRN and Luhn check digits +5, placeholder phone ranges, reserved e-mail
domains), and so are the decoys shaped like them (a corporate registration number or a
barcode with an RRN's 13 digits, a gift-card code with a card's 16: `piilab.safe_values`).
`piilab.safety.safety_problems` checks every value of a record against those rules, whatever
its spelling (separators, full-width or spoken digits), and audits the text for shaped
strings that pass a check.
"""

from __future__ import annotations

import datetime as _dt
import random

from piilab import safe_values as SV
from piilab.checksums import invalid_card_number, invalid_rrn
from piilab.wide import vocab as V
from piilab.wide.errors import WideCorpusError

#: Domains reserved for examples (RFC 2606 and 6761; `piilab.safety.email_ok` checks them).
EMAIL_DOMAINS = ("example.com", "example.net", "example.org", "mail.example.com",
                 "corp.example.net", "webmail.example")

FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
KO_SPOKEN = ("공", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구")
EN_SPOKEN = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
EN_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December")


digits = SV.digits  # (the course generator's, shared)


def spoken(groups: list[str], lang: str, rng: random.Random) -> str:
    """Digits read aloud group by group (speech-to-text output): ``공일공 일이삼사 ...``."""
    if lang == "ko":
        zero = rng.choice(("공", "영"))
        words = [zero if d == "0" else KO_SPOKEN[int(d)] for d in "".join(groups)]
        out, pos = [], 0
        for g in groups:
            out.append("".join(words[pos:pos + len(g)]))
            pos += len(g)
        return " ".join(out)
    oh = rng.random() < 0.5
    return ", ".join(" ".join(("oh" if oh and d == "0" else EN_SPOKEN[int(d)]) for d in g)
                     for g in groups)


def spell_groups(groups: list[str], lang: str, rng: random.Random, *,
                 spoken_ok: bool = False) -> str:
    """One of at least six spellings of a digit-group number."""
    style = rng.randrange(8 if spoken_ok else 7)
    if style <= 1:
        return "-".join(groups)
    if style == 2:
        return " ".join(groups)
    if style == 3:
        return "".join(groups)
    if style == 4:
        return ".".join(groups)
    if style == 5:
        return "-".join(groups).translate(FULLWIDTH)
    if style == 6:
        return " - ".join(groups) if len(groups) > 2 else "".join(groups).translate(FULLWIDTH)
    return spoken(groups, lang, rng)


# --- PERSON ---------------------------------------------------------------------------

def ko_given(rng: random.Random) -> str:
    return rng.choice(V.KO_GIVEN_FIRST) + rng.choice(V.KO_GIVEN_SECOND)


def person(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        if ctx.get("roman") or rng.random() < 0.03:  # a romanized Korean name
            return f"{rng.choice(V.KO_ROMAN_GIVEN).capitalize()} {rng.choice(V.KO_ROMAN_SURNAMES).capitalize()}"
        return rng.choice(V.KO_SURNAMES) + ko_given(rng)
    first, last = V.faker_names()
    style = rng.random()
    if style < 0.07:  # a Korean name in English text
        return f"{rng.choice(V.KO_ROMAN_GIVEN).capitalize()} {rng.choice(V.KO_ROMAN_SURNAMES).capitalize()}"
    if style < 0.12:
        return f"{rng.choice(first)} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {rng.choice(last)}"
    return f"{rng.choice(first)} {rng.choice(last)}"


def given_only(rng: random.Random, lang: str, ctx: dict) -> str:
    """A first name alone (a chat nickname, "Dear Anna")."""
    if lang == "ko":
        return ko_given(rng)
    return rng.choice(V.faker_names()[0])


# --- dates ----------------------------------------------------------------------------

#: The years a document's person is born in, ``randrange(*BIRTH_YEARS)``.
BIRTH_YEARS = (1938, 2012)


def birth_date(rng: random.Random, ctx: dict) -> _dt.date:
    return SV.birth_date(rng, ctx, BIRTH_YEARS)


def format_date(d: _dt.date, lang: str, style: int) -> str:
    """Ten Korean and ten English date spellings (`style` 0-9)."""
    if lang == "ko":
        return (f"{d.year}년 {d.month}월 {d.day}일", f"{d.year}-{d.month:02d}-{d.day:02d}",
                f"{d.year}.{d.month:02d}.{d.day:02d}", f"{d.year}.{d.month}.{d.day}",
                f"{d.year % 100:02d}.{d.month:02d}.{d.day:02d}",
                f"{d.year % 100:02d}{d.month:02d}{d.day:02d}",
                f"{d.year}/{d.month:02d}/{d.day:02d}", f"{d.year % 100:02d}년 {d.month}월 {d.day}일",
                f"{d.year}년{d.month:02d}월{d.day:02d}일",
                f"{d.year}. {d.month}. {d.day}.")[style]
    suffix = "th" if 11 <= d.day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
    return (f"{EN_MONTHS[d.month - 1]} {d.day}, {d.year}", f"{d.month:02d}/{d.day:02d}/{d.year}",
            f"{d.year}-{d.month:02d}-{d.day:02d}", f"{d.day} {EN_MONTHS[d.month - 1]} {d.year}",
            f"{d.day}{suffix} {EN_MONTHS[d.month - 1][:3]} {d.year}",
            f"{EN_MONTHS[d.month - 1][:3]} {d.day}, {d.year}",
            f"{d.month}/{d.day}/{d.year % 100:02d}", f"{d.day:02d}.{d.month:02d}.{d.year}",
            f"{d.day:02d}/{d.month:02d}/{d.year}",
            f"{EN_MONTHS[d.month - 1]} {d.day}{suffix}, {d.year}")[style]


def dob(rng: random.Random, lang: str, ctx: dict) -> str:
    return format_date(birth_date(rng, ctx), lang, rng.randrange(10))


def other_date(rng: random.Random, lang: str) -> str:
    """An appointment, due or delivery date: never a birth date (a decoy)."""
    d = _dt.date(rng.randrange(2024, 2028), rng.randrange(1, 13), rng.randrange(1, 29))
    return format_date(d, lang, rng.choice((0, 1, 2, 3, 5, 8)))


# --- numbers --------------------------------------------------------------------------

def rrn(rng: random.Random, lang: str, ctx: dict) -> str:
    n = invalid_rrn(rng, birth=birth_date(rng, ctx)).replace("-", "")
    groups = [n[:6], n[6:]]
    style = rng.randrange(7)
    if style == 6 and ctx.get("spoken"):
        return spoken(groups, lang, rng)
    return ("-".join(groups), "-".join(groups), " ".join(groups), "".join(groups),
            "-".join(groups).translate(FULLWIDTH), f"{groups[0]} - {groups[1]}",
            "-".join(groups))[style]


def card(rng: random.Random, lang: str, ctx: dict) -> str:
    if rng.random() < 0.15:  # 15-digit, 4-6-5 grouping
        n = invalid_card_number(rng, prefix=rng.choice(("34", "37")), length=15)
        groups = [n[:4], n[4:10], n[10:]]
    else:
        n = invalid_card_number(rng, prefix=rng.choice(("4", "51", "52", "53", "54", "55",
                                                         "9410", "9430", "6250")))
        groups = [n[i:i + 4] for i in range(0, 16, 4)]
    return spell_groups(groups, lang, rng, spoken_ok=bool(ctx.get("spoken")))


def account(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        shape = rng.choice(((3, 3, 6), (4, 3, 6), (3, 4, 4, 2), (3, 6, 2, 3), (3, 2, 6),
                            (6, 2, 6), (3, 6, 5), (4, 4, 4)))
    else:
        shape = rng.choice(((8,), (10,), (12,), (4, 4), (4, 4, 2), (3, 3, 4), (2, 6)))
    groups = [digits(rng, g) for g in shape]
    return spell_groups(groups, lang, rng, spoken_ok=bool(ctx.get("spoken")))


def phone(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        middle = SV.ko_unassigned_group(rng, 4)  # placeholder range, as in the course corpus
        last = digits(rng, 4)
        style = rng.randrange(10)
        if style == 7:
            return f"+82 10-{middle}-{last}"
        if style == 8:
            return f"+82-10-{middle}-{last}" if rng.random() < 0.5 else f"(010) {middle}-{last}"
        return spell_groups(["010", middle, last], lang, rng, spoken_ok=bool(ctx.get("spoken")))
    if rng.random() < 0.3 or ctx.get("uk"):  # UK: Ofcom's drama range 07700 900000-900999
        tail = f"{rng.randrange(1000):03d}"
        return rng.choice((f"07700 900{tail}", f"07700900{tail}", f"+44 7700 900{tail}",
                           f"+44 (0)7700 900{tail}", f"07700-900-{tail}"))
    area = rng.choice(("212", "312", "415", "503", "617", "702", "808", "206", "305", "404"))
    line = SV.us_fiction_line(rng)
    style = rng.randrange(9)
    if style == 0:
        return f"({area}) 555-{line}"
    if style == 1:
        return f"+1 {area} 555 {line}"
    if style == 2:
        return f"+1-{area}-555-{line}"
    if style == 3:
        return f"1 ({area}) 555-{line}"
    return spell_groups([area, "555", line], lang, rng, spoken_ok=bool(ctx.get("spoken")))


def email(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko" or rng.random() < 0.2:
        first, last = rng.choice(V.KO_ROMAN_GIVEN), rng.choice(V.KO_ROMAN_SURNAMES)
    else:
        names = V.faker_names()
        first, last = rng.choice(names[0]).lower(), rng.choice(names[1]).lower()
    style = rng.randrange(7)
    local = (f"{first}.{last}", f"{first[0]}{last}{rng.randrange(10, 100)}", f"{last}_{first}",
             f"{first}{rng.randrange(1970, 2010)}", f"{first}-{last}", f"{last}.{first[0]}",
             f"{first}{last}")[style]
    if rng.random() < 0.1:
        local = local.capitalize()
    return f"{local}@{rng.choice(EMAIL_DOMAINS)}"


def address(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        region, districts = rng.choice(V.KO_REGIONS)
        district = rng.choice(districts)
        head = f"{region} {district}".strip() if district else region
        if rng.random() < 0.7:  # road-name address
            road = rng.choice(V.KO_ROAD_STEMS) + rng.choice(V.KO_ROAD_SUFFIX)
            if rng.random() < 0.4:
                road += f"{rng.randrange(2, 80)}번길"
            addr = f"{head} {road} {rng.randrange(1, 400)}"
            if rng.random() < 0.2:
                addr += f"-{rng.randrange(1, 30)}"
        else:  # lot-number address
            dong = rng.choice(V.KO_DONG_STEMS) + rng.choice(("동", "동", "1동", "2동", "읍", "리"))
            addr = f"{head} {dong} {rng.randrange(1, 1500)}-{rng.randrange(1, 60)}"
            if rng.random() < 0.3:
                addr += "번지"
        tail = rng.random()
        if tail < 0.35:
            addr += f", {rng.randrange(101, 130)}동 {rng.randrange(1, 30)}{rng.randrange(1, 6):02d}호"
        elif tail < 0.5:
            addr += f" {rng.choice(V.KO_BUILDING_NAMES)} {rng.randrange(1, 20)}{rng.randrange(1, 10):02d}호"
        elif tail < 0.6:
            addr += f" {rng.randrange(2, 15)}층"
        return addr
    if rng.random() < 0.3 or ctx.get("uk"):
        area = rng.choice(V.UK_POSTCODE_AREAS)
        street = f"{rng.randrange(1, 240)} {rng.choice(V.US_STREET_STEMS)} {rng.choice(V.UK_STREET_TYPES)}"
        if rng.random() < 0.25:
            street = f"Flat {rng.randrange(1, 40)}, {street}"
        post = f"{area}{rng.randrange(1, 30)} {rng.randrange(1, 10)}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}"
        return f"{street}, {rng.choice(V.UK_TOWNS)} {post}"
    city, state = rng.choice(V.US_CITIES)
    street = f"{rng.randrange(10, 9900)} {rng.choice(V.US_STREET_STEMS)} {rng.choice(V.US_STREET_TYPES)}"
    if rng.random() < 0.3:
        street += f", {rng.choice(V.US_UNITS)} {rng.randrange(1, 40)}{rng.choice(('', 'A', 'B', 'C'))}"
    zipcode = f"{rng.randrange(10000, 99999)}"
    if rng.random() < 0.1:
        zipcode += f"-{rng.randrange(1000, 9999)}"
    sep = ", " if rng.random() < 0.8 else " "
    return f"{street}{sep}{city}, {state} {zipcode}"


def rel(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        return rng.choice(V.KO_REL)
    if ctx.get("form"):
        return rng.choice(V.EN_REL_FORM)
    return rng.choice(V.EN_REL)


GENERATORS = {"EMAIL": email, "RRN": rrn, "CARD": card, "ACCOUNT": account, "PHONE": phone,
              "DOB": dob, "ADDRESS": address, "PERSON": person, "REL": rel}


# --- decoys (hard negatives): shaped like a label, not PII in this experiment -----------
# The shapes shared with the other generators come from `piilab.safe_values`.

#: The switchboard prefixes this corpus draws (a subset of
#: `piilab.safe_values.KO_SWITCHBOARD_PREFIXES`, as the other generators' are).
KO_SWITCHBOARD_DRAW: tuple[str, ...] = ("1588", "1577", "1544", "1600", "1661", "1899")


def decoy(kind: str, rng: random.Random, lang: str) -> str:
    if kind == "ORDER":
        return rng.choice((SV.order_number(rng, years=(2024, 2028)),
                           f"{rng.randrange(2024, 2028)}{digits(rng, 10)}",
                           f"#{digits(rng, 7)}", f"SO{digits(rng, 8)}"))
    if kind == "TRACKING":
        return rng.choice((f"{digits(rng, 4)}-{digits(rng, 4)}-{digits(rng, 4)}",
                           f"1Z{digits(rng, 3)}AB{digits(rng, 10)}", digits(rng, 12),
                           f"RR{digits(rng, 9)}KR"))
    if kind == "INVOICE":
        return rng.choice((f"INV-{digits(rng, 6)}", f"No. {digits(rng, 4)}-{digits(rng, 3)}",
                           f"{rng.randrange(2024, 2028)}-{digits(rng, 5)}"))
    if kind == "AMOUNT":
        if lang == "ko":
            return rng.choice((f"{rng.randrange(1, 9000) * 100:,}원", f"{rng.randrange(1, 500)}만 원",
                               f"₩{rng.randrange(1, 90000) * 100:,}", f"{rng.randrange(1, 999)},000원"))
        return rng.choice((f"${rng.randrange(1, 9000):,}.{rng.randrange(100):02d}",
                           f"£{rng.randrange(1, 900)}.{rng.randrange(100):02d}",
                           f"USD {rng.randrange(10, 90000):,}"))
    if kind == "SWITCHBOARD":  # customer-centre numbers, never a person's
        if lang == "ko":
            return rng.choice((SV.switchboard(rng, lang, KO_SWITCHBOARD_DRAW),
                               f"02-{rng.randrange(2000, 3999)}-{digits(rng, 4)}"))
        return rng.choice((SV.switchboard(rng, lang, KO_SWITCHBOARD_DRAW),
                           f"0800 {digits(rng, 3)} {digits(rng, 4)}",
                           f"1-888-{rng.randrange(200, 999)}-{digits(rng, 4)}"))
    if kind == "BIZREG":  # business registration number (사업자등록번호): 3-2-5 digits
        return f"{digits(rng, 3)}-{digits(rng, 2)}-{digits(rng, 5)}"
    if kind == "CORPREG":  # corporate registration number: 6-7 digits, shaped like an RRN
        n = SV.registration_shaped(rng, rng.choice(("110111", "134511", "284211", "160111")))
        return f"{n[:6]}-{n[6:]}"
    if kind == "BARCODE":  # a 13-digit product barcode, shaped like an RRN without hyphen
        return SV.registration_shaped(rng, "880")
    if kind == "PRODUCT":
        return rng.choice((f"SKU-{rng.choice('ABCDEFGH')}{digits(rng, 4)}", f"PRD-{digits(rng, 6)}",
                           f"{rng.choice(('KX', 'QT', 'MX'))}{digits(rng, 3)}-{rng.choice('ABCDEF')}",
                           f"Model {rng.choice('ABCDEFGH')}{digits(rng, 2)}-{digits(rng, 3)}"))
    if kind == "DATE":
        return other_date(rng, lang)
    if kind == "TIME":
        if lang == "ko":
            return rng.choice((f"오전 {rng.randrange(1, 12)}시", f"오후 {rng.randrange(1, 12)}시 {rng.randrange(0, 6)}0분",
                               f"{rng.randrange(8, 21):02d}:{rng.randrange(0, 6)}0"))
        return rng.choice((f"{rng.randrange(1, 12)}:{rng.randrange(0, 6)}0 {rng.choice(('AM', 'PM'))}",
                           f"{rng.randrange(8, 21):02d}:{rng.randrange(0, 6)}0"))
    if kind == "TICKET":
        return rng.choice((f"REF-{digits(rng, 6)}", f"CS{digits(rng, 8)}", f"#{digits(rng, 5)}",
                           f"TKT-{digits(rng, 4)}-{digits(rng, 2)}", f"POL-{digits(rng, 8)}"))
    if kind == "EMPLOYEE":
        return rng.choice((f"EMP-{digits(rng, 5)}", f"사번 {digits(rng, 7)}" if lang == "ko" else f"ID {digits(rng, 6)}"))
    if kind == "RELWORD":
        return rng.choice(V.KO_REL_DECOYS if lang == "ko" else V.EN_REL_DECOYS)
    if kind == "BRAND":
        return rng.choice(V.KO_BRANDS if lang == "ko" else V.EN_BRANDS)
    if kind == "ROLE_EMAIL":  # a shared, non-personal mailbox
        return f"{rng.choice(('help', 'support', 'noreply', 'info', 'billing', 'cs'))}@{rng.choice(EMAIL_DOMAINS)}"
    if kind == "URL":
        return f"https://{rng.choice(('www.', 'm.', ''))}example.{rng.choice(('com', 'net', 'org'))}/{rng.choice(('track', 'help', 'event', 'pay'))}/{digits(rng, 5)}"
    if kind == "IP":
        return f"{rng.choice(('10', '192.168', '172.16'))}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
    raise WideCorpusError("a decoy names no decoy kind of the wide corpus")


DECOY_KINDS = ("ORDER", "TRACKING", "INVOICE", "AMOUNT", "SWITCHBOARD", "BIZREG", "CORPREG",
               "BARCODE", "PRODUCT", "DATE", "TIME", "TICKET", "EMPLOYEE", "RELWORD",
               "BRAND", "ROLE_EMAIL", "URL", "IP")
