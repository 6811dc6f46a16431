"""Genres of the wide corpus: how a document is composed (chapter 02, "the wide profile").

A document is built by a `Doc` from three kinds of lines of one genre and language: a
*head* (a title, an e-mail header, a form title), *body* lines drawn at random and a *tail*
(a signature, a footer). Lines are small templates in the one grammar of the three
generators (`piilab.templating`):

- ``{PERSON}``, ``{PHONE2}``, ``{GIVEN}`` ... a PII slot; the same slot in one document is
  the same value (token reuse); ``{GIVEN}`` is a first name alone (label PERSON);
  ``{PERSON@spaced}`` writes the name with spaces between its characters;
- ``{@ORDER}``, ``{@BIZREG}`` ... a decoy (`piilab.wide.values.DECOY_KINDS`): shaped like a
  label, not PII in this experiment;
- ``{a|b|c}`` a phrasing choice; ``{:}`` the field separator and ``{-}`` the bullet of the
  document's layout.

The *layout variant* (0-5) chooses the head, the separator, the bullet and the line prefix
(time stamps, speaker labels), and it is the template family of the record: variants 0-3
make the training split, 4 validation and 5 test, so the evaluation splits share no family
(and, through the layout, no skeleton) with training. A negative document (no PII) keeps
only the lines without slots. Genres with a ``post`` step (OCR) damage the text around the
values, never the values themselves.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from piilab.errors import PiilabError
from piilab.templating import Piece, render
from piilab.templating import compile as compile_template
from piilab.wide import values as W

#: Slot names that are not labels: ``{GIVEN}`` is a first name alone, labelled PERSON.
_LABEL_OF = {"GIVEN": "PERSON"}
#: The layout marks: the field separator and the bullet of the document's variant.
MARKS = (":", "-")

SEPARATORS = (": ", " : ", "：", " - ", " | ", " = ")
BULLETS = ("- ", "* ", "· ", "• ", "> ", "□ ")
MAX_DRAWS = 40


class CompositionError(PiilabError, RuntimeError):
    """A line could not be filled with distinct values (a bug in the pools)."""


@functools.cache
def _compiled(template: str) -> tuple[Piece, ...]:
    """The pieces of one line (`piilab.templating`: the grammar of all three generators)."""
    return compile_template(template, labels={*W.GENERATORS, *_LABEL_OF},
                            decoys=W.DECOY_KINDS, marks=MARKS, where="a wide template line")


@dataclass
class Doc:
    """One document under construction: its segments (text or value) and its slot values."""

    rng: random.Random
    lang: str
    variant: int
    negative: bool = False
    ctx: dict = field(default_factory=dict)
    segments: list[tuple[str, bool]] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    label_of: dict[str, str] = field(default_factory=dict)

    @property
    def sep(self) -> str:
        return SEPARATORS[self.variant]

    @property
    def bullet(self) -> str:
        return BULLETS[self.variant]

    def has_slots(self, template: str) -> bool:
        return any(p.kind == "slot" for p in _compiled(template))

    def value(self, key: str, label: str) -> str:
        if key not in self.values:
            gen = W.given_only if key.startswith("GIVEN") else W.GENERATORS[label]
            for _ in range(MAX_DRAWS):
                v = gen(self.rng, self.lang, self.ctx)
                if v not in self.label_of and all(v not in o and o not in v
                                                  for o in self.label_of):
                    break
            else:
                raise CompositionError(f"no distinct value for slot {key}")
            self.values[key] = v
            self.label_of[v] = label
        return self.values[key]

    def text(self, s: str) -> None:
        if s:
            self.segments.append((s, False))

    def line(self, template: str, prefix: str = "") -> bool:
        """Render one template line (skipped in a negative document when it has slots)."""
        if self.negative and self.has_slots(template):
            return False
        self.text(prefix)
        parts = render(_compiled(template), self.rng,
                       value=lambda p: self.value(p.key, _LABEL_OF.get(p.label, p.label)),
                       decoy=lambda kind: W.decoy(kind, self.rng, self.lang),
                       mark=self._mark)
        for piece, text in parts:
            # A spaced slot is a value segment too when the name has no spaced variant
            # (`templating.spaced` writes it as it is).
            if piece.kind == "slot" and (not piece.spaced or text == self.values[piece.key]):
                self.segments.append((text, True))
            else:
                self.text(text)
        self.text("\n")
        return True

    def _mark(self, mark: str) -> str:
        return self.sep if mark == ":" else self.bullet

    def source(self) -> str:
        return "".join(s for s, _ in self.segments).strip("\n")


@dataclass(frozen=True)
class Pools:
    head: tuple[str, ...]
    body: tuple[str, ...]
    tail: tuple[str, ...] = ()


@dataclass(frozen=True)
class Genre:
    name: str
    ko: Pools
    en: Pools
    lines: tuple[int, int] = (1, 4)  # body lines of an ordinary document
    long_lines: int = 14  # body lines at most of a long one
    ctx: dict = field(default_factory=dict)
    prefix: Callable[[Doc, int], str] | None = None
    post: Callable[[Doc], None] | None = None
    head_p: float = 0.9
    tail_p: float = 0.6


# --------------------------------------------------------------------------------------
# Line prefixes and post-processing
# --------------------------------------------------------------------------------------

def _clock(d: Doc, i: int) -> tuple[int, int]:
    base = d.ctx.setdefault("clock", (d.rng.randrange(7, 22), d.rng.randrange(60)))
    m = base[0] * 60 + base[1] + i * d.rng.randrange(1, 4)
    return (m // 60) % 24, m % 60


def _speaker(d: Doc) -> str:
    who = d.ctx.setdefault("speakers", [])
    if d.negative or d.rng.random() < 0.35:
        names = (("나", "상대", "친구", "팀장", "막내", "고객센터") if d.lang == "ko"
                 else ("Me", "Mom", "Agent", "Team", "Coach", "Support"))
        return d.rng.choice(names)
    if len(who) < 2 or d.rng.random() < 0.2:
        key = f"GIVEN{len(who) + 1}" if len(who) < 9 else "GIVEN9"
        who.append(key)
    key = d.rng.choice(who)
    return d.value(key, "PERSON")


def chat_prefix(d: Doc, i: int) -> str:
    h, m = _clock(d, i)
    name_is_value = False
    name = _speaker(d)
    name_is_value = name in d.label_of
    ko = d.lang == "ko"
    ampm = ("오전" if h < 12 else "오후") if ko else ("AM" if h < 12 else "PM")
    h12 = h % 12 or 12
    stamp = (f"[{ampm} {h12}:{m:02d}] " if ko else f"[{h12}:{m:02d} {ampm}] ",
             f"{h:02d}:{m:02d} ", f"({h12}:{m:02d}) ", f"[{h:02d}:{m:02d}] ",
             f"{h:02d}시{m:02d}분 " if ko else f"{h:02d}h{m:02d} ", "")[d.variant]
    mark = (": ", ": ", " > ", " - ", " : ", "\n")[d.variant]
    d.text(stamp)
    if name_is_value:
        d.segments.append((name, True))
    else:
        d.text(name)
    return mark


def log_prefix(d: Doc, i: int) -> str:
    h, m = _clock(d, i)
    sec = d.rng.randrange(60)
    level = d.rng.choice(("INFO", "INFO", "WARN", "DEBUG", "ERROR"))
    return (f"2026-{d.rng.randrange(1, 13):02d}-{d.rng.randrange(1, 29):02d}T{h:02d}:{m:02d}:{sec:02d}Z {level} ",
            f"[{level}] {h:02d}:{m:02d}:{sec:02d} ", f"{level.lower()}|{h:02d}{m:02d}{sec:02d}|",
            f"<{level[0]}> ", f"{d.rng.randrange(10**9, 10**10)} {level} ", f"{level}\t")[d.variant]


def transcript_prefix(d: Doc, i: int) -> str:
    agent = ("상담원", "상담사", "직원", "A", "상담", "CS")[d.variant] if d.lang == "ko" else \
        ("Agent", "Rep", "A", "Operator", "Staff", "CSR")[d.variant]
    caller = ("고객", "고객", "B", "발신자", "문의자", "C")[d.variant] if d.lang == "ko" else \
        ("Caller", "Customer", "B", "Client", "Member", "C")[d.variant]
    who = agent if i % 2 == 0 else caller
    stamp = ("", f"[{i // 2:02d}:{d.rng.randrange(60):02d}] ", "", f"({i}) ", "", f"{i + 1}. ")[d.variant]
    return f"{stamp}{who}: "


_OCR_SWAPS = (("O", "0"), ("0", "O"), ("l", "1"), ("1", "l"), ("I", "l"), ("rn", "m"),
              ("다", "디"), ("니", "너"), ("에", "애"), ("습", "슴"))


def ocr_noise(d: Doc) -> None:
    """Damage the text around the values as a scanner would: swapped look-alike characters,
    broken lines, stray spaces. Values stay intact (the gold is what the document says)."""
    out: list[tuple[str, bool]] = []
    for text, is_value in d.segments:
        if not is_value and len(text) > 3:
            chars = text
            for a, b in _OCR_SWAPS:
                if a in chars and d.rng.random() < 0.25:
                    chars = chars.replace(a, b, 1)
            if len(chars) > 12 and d.rng.random() < 0.4:
                cut = d.rng.randrange(3, len(chars) - 3)
                chars = chars[:cut] + d.rng.choice(("\n", " \n", "  ", "-\n")) + chars[cut:]
            text = chars
        out.append((text, is_value))
    d.segments = out


# --------------------------------------------------------------------------------------
# The genres. Korean pools mix in English now and then (code-switching), as real text does.
# --------------------------------------------------------------------------------------

CHAT = Genre(
    "chat",
    ko=Pools(
        head=("[{GIVEN}님과의 대화]", "카톡 대화 내보내기", "--- 대화방 ---", "단톡방 (3명)",
              "채팅 기록 백업", "메신저 대화"),
        body=("나 번호 바뀜 {PHONE} 저장해줘", "주소 보내줄게 {ADDRESS}", "ㅇㅋ 지금 출발함",
              "{REL}가 그러는데 오늘 늦는대", "계좌 {ACCOUNT} ({@BRAND} 말고 {가람은행|누리은행})으로 보내줘",
              "ㅋㅋㅋ 알겠어", "내일 {@TIME}에 보자", "{PERSON} 선배 연락처 알아? {PHONE2} 맞나",
              "메일로 보냈어 {EMAIL} 확인해봐", "택배 송장 {@TRACKING} 이거 맞지?",
              "우리 {REL} 생일 {DOB}인데 선물 뭐하지", "회의 링크 {@URL}", "헐 대박",
              "{@RELWORD} 행사 가?", "OK 이따 call 할게", "주문번호 {@ORDER} 취소했어",
              "{PERSON}님이 {@AMOUNT} 보냈다고 함", "카드 {CARD} 이거 해지해야 되나",
              "오늘 {@DATE} 마감이래 ㅠㅠ", "주민번호 {RRN} 이거 적어서 내래, 지워줘 나중에"),
    ),
    en=Pools(
        head=("Chat with {GIVEN}", "Exported conversation", "--- group chat ---",
              "Messages (3 people)", "Chat backup", "DM thread"),
        body=("new number btw {PHONE}", "my address is {ADDRESS}", "ok omw", "lol",
              "{REL} says she'll be late", "send it to acct {ACCOUNT} pls",
              "can u text {PERSON}? her cell is {PHONE2}", "emailed u at {EMAIL}",
              "tracking {@TRACKING} says delivered??", "{REL}'s birthday is {DOB} btw",
              "meeting link {@URL}", "see you at {@TIME}", "got the {@RELWORD} coupon",
              "order {@ORDER} cancelled", "{PERSON} paid {@AMOUNT} already",
              "is card {CARD} still active", "deadline is {@DATE} ugh", "haha same",
              "call the {@SWITCHBOARD} line, not me"),
    ),
    lines=(1, 6), long_lines=30, prefix=chat_prefix, head_p=0.4, tail_p=0.0,
)

EMAIL = Genre(
    "email",
    ko=Pools(
        head=("보낸 사람{:}{PERSON} <{EMAIL}>\n받는 사람{:}{@ROLE_EMAIL}\n제목{:}{문의드립니다|확인 요청|자료 송부}\n",
              "From{:}{EMAIL}\nTo{:}{@ROLE_EMAIL}\nSubject{:}RE: {견적 문의|일정 변경|서류 제출}\n",
              "제목{:}[{@TICKET}] {회신 부탁드립니다|처리 결과 안내}\n발신{:}{PERSON} ({EMAIL})\n",
              "----- 원본 메일 -----\n보낸사람{:}{EMAIL}\n날짜{:}{@DATE}\n",
              "Date{:}{@DATE}\nFrom{:}\"{PERSON}\" <{EMAIL}>\n",
              "수신{:}{@ROLE_EMAIL}\n참조{:}{EMAIL}\n"),
        body=("안녕하세요, {PERSON}입니다.", "{PERSON} {님|과장님|팀장님}, 요청하신 자료 첨부합니다.",
              "제 연락처는 {PHONE}입니다.", "배송지는 {ADDRESS}로 변경 부탁드립니다.",
              "견적서 번호는 {@INVOICE}이고 금액은 {@AMOUNT}입니다.", "회신은 {EMAIL}로 부탁드립니다.",
              "> {GIVEN}님 말씀하신 건 확인했습니다.", "> 원본{:}{@DATE} 회의 자료",
              "사업자등록번호{:}{@BIZREG}", "입금 계좌{:}{ACCOUNT} ({가람은행|누리은행|미르은행})",
              "FYI 첨부파일 확인 부탁드려요.", "{REL}가 대신 서류를 제출할 예정입니다.",
              "다음 미팅은 {@DATE} {@TIME}입니다.", "감사합니다."),
        tail=("\n--\n{PERSON} | {@BRAND}\nM. {PHONE} | {EMAIL}", "\n감사합니다.\n{PERSON} 드림",
              "\n-- \n대표번호 {@SWITCHBOARD}", "\n{PERSON}\n{가온물산|누리테크|한울소프트} {영업팀|인사팀}\n{PHONE}"),
    ),
    en=Pools(
        head=("From{:}{PERSON} <{EMAIL}>\nTo{:}{@ROLE_EMAIL}\nSubject{:}{Question|Follow-up|Documents}\n",
              "From{:}{EMAIL}\nSent{:}{@DATE}\nSubject{:}RE: {quote request|schedule change}\n",
              "Subject{:}[{@TICKET}] {Please reply|Resolution}\nFrom{:}{PERSON} ({EMAIL})\n",
              "-----Original Message-----\nFrom{:}{EMAIL}\nDate{:}{@DATE}\n",
              "Date{:}{@DATE}\nFrom{:}\"{PERSON}\" <{EMAIL}>\n", "To{:}{@ROLE_EMAIL}\nCc{:}{EMAIL}\n"),
        body=("Hi {GIVEN},", "Dear {PERSON},", "You can reach me at {PHONE}.",
              "Please ship it to {ADDRESS}.", "Invoice {@INVOICE} for {@AMOUNT} is attached.",
              "Reply to {EMAIL} if anything is missing.", "> On {@DATE}, {PERSON} wrote:",
              "> Thanks, see attached.", "Our EIN is {@BIZREG}.", "Wire to account {ACCOUNT}.",
              "{REL} will drop off the forms.", "Next call: {@DATE} at {@TIME}.",
              "Thanks in advance.", "Best regards,"),
        tail=("\n--\n{PERSON} | {@BRAND}\nM: {PHONE} | {EMAIL}", "\nCheers,\n{GIVEN}",
              "\n-- \nMain line {@SWITCHBOARD}", "\n{PERSON}\n{Northwind Traders|Contoso Logistics}\n{PHONE}"),
    ),
    lines=(2, 6), long_lines=16,
)

FORM = Genre(
    "form",
    ko=Pools(
        head=("[신청서]", "■ 고객 정보 변경 신청", "회원 가입 정보", "본인 확인서", "등록 카드", "접수 양식"),
        body=("성명{:}{PERSON}", "이름{:}{PERSON}", "생년월일{:}{DOB}", "주민등록번호{:}{RRN}",
              "휴대폰{:}{PHONE}", "연락처{:}{PHONE}", "비상연락처{:}{PHONE2} ({REL})", "이메일{:}{EMAIL}",
              "주소{:}{ADDRESS}", "자택 주소{:}{ADDRESS}", "계좌번호{:}{ACCOUNT}", "카드번호{:}{CARD}",
              "보호자{:}{PERSON2} ({REL})", "관계{:}{REL}", "접수번호{:}{@TICKET}", "접수일{:}{@DATE}",
              "법인등록번호{:}{@CORPREG}", "사업자번호{:}{@BIZREG}", "고객센터{:}{@SWITCHBOARD}",
              "비고{:}없음", "서명{:}{PERSON@spaced}"),
        tail=("위 내용이 사실임을 확인합니다.", "※ 개인정보는 목적 달성 후 파기됩니다.", "{@DATE} 신청인 (인)"),
    ),
    en=Pools(
        head=("[Application]", "■ Change of details", "Registration form", "Identity check",
              "Intake card", "Request form"),
        body=("Name{:}{PERSON}", "Full name{:}{PERSON}", "Date of birth{:}{DOB}", "DOB{:}{DOB}",
              "Phone{:}{PHONE}", "Mobile{:}{PHONE}", "Emergency contact{:}{PERSON2}, {REL}",
              "Email{:}{EMAIL}", "Address{:}{ADDRESS}", "Mailing address{:}{ADDRESS}",
              "Account no.{:}{ACCOUNT}", "Card number{:}{CARD}", "Relationship{:}{REL}",
              "Reference{:}{@TICKET}", "Date received{:}{@DATE}", "Company reg. no.{:}{@BIZREG}",
              "Help line{:}{@SWITCHBOARD}", "Notes{:}none"),
        tail=("I confirm the above is true.", "Signed {@DATE}", "Office use only: {@TICKET}"),
    ),
    lines=(2, 7), long_lines=15, ctx={"form": True}, head_p=0.8,
)

CALLNOTE = Genre(
    "callnote",
    ko=Pools(
        head=("[상담 메모]", "통화 기록 {@TICKET}", "인바운드 상담 요약", "CS 메모 ({@DATE})", "콜 노트", "상담 이력"),
        body=("고객 {PERSON} 님 본인 확인 완료 (생년월일 {DOB})", "회신 번호 {PHONE}, {@TIME} 이후 통화 희망",
              "{REL}가 대신 전화함. 본인 동의 확인 필요", "주소지 {ADDRESS}로 변경 요청",
              "카드 {CARD} 분실 신고 접수", "환불 계좌 {ACCOUNT} 등록", "주문 {@ORDER} 배송 지연 문의",
              "{@AMOUNT} 부분 환불 안내함", "고객센터 {@SWITCHBOARD} 재안내", "특이사항 없음",
              "메일 {EMAIL}로 안내문 발송", "다음 콜백 {@DATE}", "고객 불만 강함, escalation 요청"),
        tail=("상담원{:}{@EMPLOYEE}", "처리 상태{:}완료", "상태{:}보류"),
    ),
    en=Pools(
        head=("[Call note]", "Call log {@TICKET}", "Inbound summary", "CS memo ({@DATE})", "Call notes", "Case history"),
        body=("Verified caller {PERSON} (DOB {DOB})", "Call back on {PHONE} after {@TIME}",
              "Caller was {REL}, account holder consent pending", "Update address to {ADDRESS}",
              "Card {CARD} reported lost", "Refund to account {ACCOUNT}", "Order {@ORDER} delayed",
              "Offered {@AMOUNT} credit", "Referred to {@SWITCHBOARD}", "No issues noted",
              "Sent letter to {EMAIL}", "Follow up {@DATE}", "Customer upset, escalate"),
        tail=("Agent{:}{@EMPLOYEE}", "Status{:}closed", "Status{:}pending"),
    ),
    lines=(1, 5), long_lines=14,
)

TRANSCRIPT = Genre(
    "transcript",
    ko=Pools(
        head=("[음성 인식 결과]", "STT 변환본", "통화 녹취 (자동 변환)", "녹취록", "음성 메모 텍스트", ""),
        body=("네 고객님 성함이 어떻게 되세요", "{PERSON}이요", "네 {PERSON@spaced} 맞습니다",
              "전화번호 불러드릴게요 {PHONE}", "생년월일은 {DOB}이에요", "주민번호 앞자리랑 뒷자리 {RRN}",
              "카드 번호가 {CARD} 이거요", "계좌는 {ACCOUNT}입니다", "주소는 {ADDRESS}이요",
              "저희 {REL}가 대신 신청했거든요", "잠시만요 확인해 보겠습니다", "주문번호가 {@ORDER}인데요",
              "고객센터 번호는 {@SWITCHBOARD}입니다", "네 감사합니다", "어 그게 음 잘 모르겠어요"),
    ),
    en=Pools(
        head=("[Speech-to-text]", "STT output", "Call recording (auto transcript)", "Transcript",
              "Voicemail text", ""),
        body=("can I get your full name please", "yeah it's {PERSON}", "my number is {PHONE}",
              "date of birth {DOB}", "the card number is {CARD}", "account number {ACCOUNT}",
              "I live at {ADDRESS}", "{REL} set it up for me", "one moment please",
              "order number {@ORDER}", "you can call {@SWITCHBOARD}", "thank you so much",
              "uh I'm not sure um"),
    ),
    lines=(2, 7), long_lines=20, ctx={"spoken": True}, prefix=transcript_prefix, tail_p=0.0,
)

OCR = Genre(
    "ocr",
    ko=Pools(
        head=("스캔 문서 (OCR)", "[이미지 텍스트 추출]", "팩스 수신본", "영수증 스캔", "PDF 변환", "문서 판독 결과"),
        body=("성 명 {PERSON}", "생년월일 {DOB}", "주 소 {ADDRESS}", "전화 {PHONE}", "주민등록번호 {RRN}",
              "계좌 {ACCOUNT}", "카드 {CARD}", "발행일 {@DATE}", "금액 {@AMOUNT}", "사업자등록번호 {@BIZREG}",
              "상품코드 {@PRODUCT}", "바코드 {@BARCODE}", "본 문서는 원본과 같음을 증명함", "담당 {PERSON2}"),
    ),
    en=Pools(
        head=("Scanned document (OCR)", "[Text extracted from image]", "Fax received", "Receipt scan",
              "PDF conversion", "Document reader output"),
        body=("Name {PERSON}", "Date of Birth {DOB}", "Address {ADDRESS}", "Tel {PHONE}",
              "Account {ACCOUNT}", "Card {CARD}", "Issued {@DATE}", "Total {@AMOUNT}",
              "Tax ID {@BIZREG}", "Item {@PRODUCT}", "Barcode {@BARCODE}",
              "Certified true copy of the original", "Clerk {PERSON2}"),
    ),
    lines=(2, 6), long_lines=14, post=ocr_noise, tail_p=0.0,
)

TICKET = Genre(
    "ticket",
    ko=Pools(
        head=("[티켓 {@TICKET}] 로그인 오류", "문의 유형{:}결제", "#{@TICKET} 환불 요청", "헬프데스크 접수", "버그 리포트", "Jira {@TICKET}"),
        body=("요청자{:}{PERSON} ({EMAIL})", "연락처{:}{PHONE}", "증상{:}앱 실행 시 오류 코드 {@PRODUCT}",
              "결제 카드 {CARD}로 두 번 결제됨", "주문번호 {@ORDER}", "담당자 {GIVEN}님 확인 부탁드립니다",
              "서버 {@IP} 에서 재현됨", "우선순위{:}높음", "재현 안 됨, close 예정", "고객 {REL}가 대리 문의"),
        tail=("상태{:}접수", "상태{:}처리 중", "SLA {@DATE}"),
    ),
    en=Pools(
        head=("[Ticket {@TICKET}] Login error", "Category{:}billing", "#{@TICKET} refund request",
              "Helpdesk intake", "Bug report", "Jira {@TICKET}"),
        body=("Requester{:}{PERSON} ({EMAIL})", "Contact{:}{PHONE}", "Symptom{:}error code {@PRODUCT} on launch",
              "Charged twice on card {CARD}", "Order {@ORDER}", "{GIVEN}, can you take a look?",
              "Reproduced on {@IP}", "Priority{:}high", "Cannot reproduce, closing",
              "Opened by {REL} on the customer's behalf"),
        tail=("Status{:}open", "Status{:}in progress", "SLA {@DATE}"),
    ),
    lines=(2, 5), long_lines=12,
)

DELIVERY = Genre(
    "delivery",
    ko=Pools(
        head=("[배송 안내]", "택배 운송장", "배송 메모", "퀵 배송 요청", "반품 접수", "배송지 정보"),
        body=("받는 분{:}{PERSON}", "받는 분 연락처{:}{PHONE}", "배송지{:}{ADDRESS}", "운송장 번호{:}{@TRACKING}",
              "주문번호{:}{@ORDER}", "보내는 분{:}{@BRAND}", "요청사항{:}문 앞에 놓아주세요",
              "부재 시 {REL}에게 전달", "도착 예정{:}{@DATE}", "상품{:}{@PRODUCT}", "결제 금액{:}{@AMOUNT}",
              "경비실 맡김", "배송 문의 {@SWITCHBOARD}"),
    ),
    en=Pools(
        head=("[Delivery notice]", "Shipping label", "Delivery note", "Courier request", "Return request", "Ship-to"),
        body=("Recipient{:}{PERSON}", "Recipient phone{:}{PHONE}", "Ship to{:}{ADDRESS}",
              "Tracking no.{:}{@TRACKING}", "Order{:}{@ORDER}", "From{:}{@BRAND}",
              "Instructions{:}leave at the door", "If out, give to {REL}", "ETA{:}{@DATE}",
              "Item{:}{@PRODUCT}", "Paid{:}{@AMOUNT}", "Left with the concierge",
              "Questions? {@SWITCHBOARD}"),
    ),
    lines=(2, 6), long_lines=12,
)

CLINIC = Genre(
    "clinic",
    ko=Pools(
        head=("[{새봄내과|푸른숲치과|다온소아과}] 예약 안내", "초진 문진표", "접수증", "진료 예약 확인", "검사 결과 안내", "보호자 동의서"),
        body=("환자명{:}{PERSON}", "{PERSON} 님 {@DATE} {@TIME} 진료 예약되었습니다.", "생년월일{:}{DOB}",
              "주민번호{:}{RRN}", "연락처{:}{PHONE}", "보호자{:}{PERSON2} ({REL})", "주소{:}{ADDRESS}",
              "복용 중인 약{:}없음", "알레르기{:}페니실린", "변경은 {@SWITCHBOARD}로 연락 주세요.",
              "진료비 {@AMOUNT} 결제 완료", "{REL} 동반 내원"),
        tail=("※ 예약 10분 전 도착 부탁드립니다.", "수신거부 {@SWITCHBOARD}"),
    ),
    en=Pools(
        head=("[{Riverside Family Clinic|Oakwood Dental}] Appointment reminder", "New patient intake",
              "Registration slip", "Visit confirmation", "Lab results notice", "Consent form"),
        body=("Patient{:}{PERSON}", "{PERSON}, your visit is on {@DATE} at {@TIME}.", "DOB{:}{DOB}",
              "Phone{:}{PHONE}", "Guardian{:}{PERSON2} ({REL})", "Address{:}{ADDRESS}",
              "Medications{:}none", "Allergies{:}penicillin", "To reschedule call {@SWITCHBOARD}.",
              "Copay {@AMOUNT} received", "Accompanied by {REL}"),
        tail=("Please arrive 10 minutes early.", "Reply STOP to opt out"),
    ),
    lines=(2, 6), long_lines=12, ctx={"form": True},
)

HR = Genre(
    "hr",
    ko=Pools(
        head=("[급여 명세서]", "인사 발령 안내", "재직 증명서", "연말정산 자료", "입사 서류 체크리스트", "휴가 신청서"),
        body=("성명{:}{PERSON}", "사번{:}{@EMPLOYEE}", "주민등록번호{:}{RRN}", "급여 계좌{:}{ACCOUNT}",
              "실수령액{:}{@AMOUNT}", "주소{:}{ADDRESS}", "연락처{:}{PHONE}", "부양가족{:}{REL} {PERSON2}",
              "입사일{:}{@DATE}", "부서{:}{영업팀|인사팀|개발팀}", "사업자등록번호{:}{@BIZREG}",
              "사유{:}{REL} 병원 동행", "승인자{:}{PERSON2} 팀장"),
    ),
    en=Pools(
        head=("[Payslip]", "Personnel notice", "Employment verification", "Tax documents",
              "Onboarding checklist", "Leave request"),
        body=("Employee{:}{PERSON}", "Employee ID{:}{@EMPLOYEE}", "Pay account{:}{ACCOUNT}",
              "Net pay{:}{@AMOUNT}", "Home address{:}{ADDRESS}", "Phone{:}{PHONE}",
              "Dependent{:}{REL}, {PERSON2}", "Start date{:}{@DATE}", "Department{:}{Sales|HR|Engineering}",
              "Employer EIN{:}{@BIZREG}", "Reason{:}taking {REL} to hospital", "Approver{:}{PERSON2}"),
    ),
    lines=(2, 7), long_lines=14,
)

LEASE = Genre(
    "lease",
    ko=Pools(
        head=("부동산 임대차 계약서", "전세 계약서", "용역 계약서", "표준 근로계약서", "매매 계약서", "계약 변경 합의서"),
        body=("임대인{:}{PERSON} (주민등록번호 {RRN})", "임차인{:}{PERSON2}", "임차인 연락처{:}{PHONE}",
              "소재지{:}{ADDRESS}", "보증금{:}{@AMOUNT}", "월 차임{:}{@AMOUNT}", "계약 기간{:}{@DATE}부터 2년",
              "입금 계좌{:}{ACCOUNT}", "중개사무소 사업자번호{:}{@BIZREG}",
              "제1조 임차인은 목적물을 주거 용도로만 사용한다.", "제2조 계약금은 계약 시 지급한다.",
              "특약{:}반려동물 불가", "연대보증인{:}{REL} {PERSON3}"),
        tail=("{@DATE}\n임대인 {PERSON} (인)\n임차인 {PERSON2} (인)",),
    ),
    en=Pools(
        head=("Residential Lease Agreement", "Rental agreement", "Service contract", "Employment contract",
              "Purchase agreement", "Amendment"),
        body=("Landlord{:}{PERSON}", "Tenant{:}{PERSON2}", "Tenant phone{:}{PHONE}", "Premises{:}{ADDRESS}",
              "Deposit{:}{@AMOUNT}", "Monthly rent{:}{@AMOUNT}", "Term{:}two years from {@DATE}",
              "Payments to account {ACCOUNT}", "Agent licence {@BIZREG}",
              "1. The premises shall be used as a private residence only.",
              "2. Rent is due on the first of each month.", "Special terms{:}no pets",
              "Guarantor{:}{PERSON3}, the tenant's {REL}"),
        tail=("Signed {@DATE}\nLandlord: {PERSON}\nTenant: {PERSON2}",),
    ),
    lines=(3, 8), long_lines=16, ctx={"form": True},
)

SCHOOL = Genre(
    "school",
    ko=Pools(
        head=("[{새봄초등학교|한울중학교|가온고등학교}] 가정통신문", "현장체험학습 안내", "학부모 상담 신청", "방과후 신청서", "결석계", "알림장"),
        body=("학생 이름{:}{PERSON}", "보호자{:}{PERSON2} ({REL})", "보호자 연락처{:}{PHONE}",
              "{@DATE}에 현장체험학습이 있습니다.", "{@RELWORD} 총회가 {@DATE}에 열립니다.",
              "참가비 {@AMOUNT}는 스쿨뱅킹으로 납부해 주세요.", "담임 {PERSON3} 선생님",
              "학생 생년월일{:}{DOB}", "사유{:}{REL} 간병", "문의는 교무실 {@SWITCHBOARD}"),
    ),
    en=Pools(
        head=("[{Lincoln Elementary|Riverside High School}] Parent newsletter", "Field trip notice",
              "Conference sign-up", "After-school form", "Absence note", "Class update"),
        body=("Student{:}{PERSON}", "Parent/guardian{:}{PERSON2} ({REL})", "Guardian phone{:}{PHONE}",
              "The field trip is on {@DATE}.", "The {@RELWORD} meets on {@DATE}.",
              "Please pay the {@AMOUNT} fee online.", "Teacher{:}{PERSON3}", "Student DOB{:}{DOB}",
              "Reason{:}caring for {REL}", "Questions: front office {@SWITCHBOARD}"),
    ),
    lines=(2, 5), long_lines=10, ctx={"form": True},
)

SMS = Genre(
    "sms",
    ko=Pools(
        head=("[Web발신]", "[{가람은행|누리은행}]", "[{누리카드|별빛카드}]", "(광고)", "[알림]", "[입출금]"),
        body=("{PERSON}님 {@AMOUNT} 승인 {@DATE} {@TIME} 누적 {@AMOUNT}",
              "{GIVEN}님 계좌 {ACCOUNT} 입금 {@AMOUNT}", "카드 {CARD} 해외 승인 {@AMOUNT}",
              "인증번호 [{@TICKET}] 타인에게 알려주지 마세요", "{@RELWORD} 최대 30% 할인",
              "문의 {@SWITCHBOARD}", "무료수신거부 {@SWITCHBOARD}", "본인 명의 휴대폰 {PHONE}로 변경되었습니다"),
    ),
    en=Pools(
        head=("[Alert]", "[{Harbor Federal|Maple Trust Bank}]", "[{Northwind Visa|Granite Card}]", "(Ad)",
              "[Notice]", "[Deposit]"),
        body=("{PERSON}: {@AMOUNT} approved on {@DATE} {@TIME}", "{GIVEN}, {@AMOUNT} deposited to {ACCOUNT}",
              "Card {CARD} used abroad: {@AMOUNT}", "Your code is {@TICKET}. Never share it.",
              "{@RELWORD}: up to 30% off", "Help {@SWITCHBOARD}", "Reply STOP to opt out",
              "Your number was changed to {PHONE}"),
    ),
    lines=(1, 2), long_lines=4, tail_p=0.0,
)

MINUTES = Genre(
    "minutes",
    ko=Pools(
        head=("[주간 회의록] {@DATE}", "회의록 - 프로젝트 킥오프", "운영위원회 회의 결과", "팀 미팅 노트", "Weekly sync 회의록", "분기 리뷰"),
        body=("참석{:}{PERSON}, {PERSON2}, {PERSON3}", "{-}{GIVEN}님: 일정 {@DATE}로 확정",
              "{-}예산 {@AMOUNT} 승인", "{-}{PERSON} 님 출산휴가, 대체자 {PERSON2}", "{-}거래처 연락처 {PHONE} 공유",
              "{-}action item: {GIVEN} → 견적서 {@INVOICE} 검토", "{-}다음 회의 {@DATE} {@TIME}",
              "{-}{@RELWORD} 후원 건 보류", "{-}고객 {PERSON3} 님 불만 건 ({@TICKET})", "{-}특이사항 없음"),
    ),
    en=Pools(
        head=("[Weekly minutes] {@DATE}", "Minutes - project kickoff", "Board meeting summary", "Team notes",
              "Weekly sync", "Quarterly review"),
        body=("Attendees{:}{PERSON}, {PERSON2}, {PERSON3}", "{-}{GIVEN}: timeline fixed for {@DATE}",
              "{-}budget of {@AMOUNT} approved", "{-}{PERSON} on parental leave, cover: {PERSON2}",
              "{-}vendor contact {PHONE} shared", "{-}AI: {GIVEN} to review invoice {@INVOICE}",
              "{-}next meeting {@DATE} {@TIME}", "{-}{@RELWORD} sponsorship on hold",
              "{-}complaint from {PERSON3} ({@TICKET})", "{-}nothing else"),
    ),
    lines=(2, 6), long_lines=18,
)

CV = Genre(
    "cv",
    ko=Pools(
        head=("이력서", "자기소개서", "경력기술서", "지원서", "인적사항", "포트폴리오 요약"),
        body=("이름{:}{PERSON}", "생년월일{:}{DOB}", "휴대폰{:}{PHONE}", "이메일{:}{EMAIL}", "주소{:}{ADDRESS}",
              "학력{:}{한울대학교|가온대학교} 경영학과 졸업", "경력{:}{가온물산|누리테크} 3년 (영업)",
              "자격증{:}정보처리기사", "병역{:}필", "추천인{:}{PERSON2} ({PHONE2})", "가족관계{:}{REL}와 거주",
              "저는 고객 중심의 마인드를 가진 지원자입니다."),
    ),
    en=Pools(
        head=("Curriculum Vitae", "Résumé", "Cover letter", "Application", "Personal details", "Profile"),
        body=("Name{:}{PERSON}", "Phone{:}{PHONE}", "Email{:}{EMAIL}", "Address{:}{ADDRESS}",
              "Date of birth{:}{DOB}", "Education{:}BA Economics, {Oak Hill College|Maple University}",
              "Experience{:}3 years at {Northwind Traders|Contoso Logistics}", "Skills{:}Python, SQL, Excel",
              "Reference{:}{PERSON2}, {PHONE2}", "Languages{:}English, Korean",
              "I am a detail-oriented analyst who enjoys messy data."),
    ),
    lines=(3, 7), long_lines=14,
)

INSURANCE = Genre(
    "insurance",
    ko=Pools(
        head=("보험금 청구서", "사고 접수 내역", "보험 계약 변경 신청", "실손 청구 서류", "자동차 사고 경위서", "보험 상담 기록"),
        body=("피보험자{:}{PERSON} ({RRN})", "청구인{:}피보험자의 {REL}", "지급 계좌{:}{ACCOUNT}",
              "증권번호{:}{@TICKET}", "사고일{:}{@DATE}", "사고 장소{:}{ADDRESS} 앞", "연락처{:}{PHONE}",
              "청구 금액{:}{@AMOUNT}", "진료 병원{:}{새봄내과|한울정형외과}", "수익자{:}{PERSON2} ({REL})",
              "피보험자 생년월일{:}{DOB}", "법인등록번호{:}{@CORPREG}"),
    ),
    en=Pools(
        head=("Insurance claim", "Incident report", "Policy change request", "Medical claim",
              "Auto accident statement", "Claims call record"),
        body=("Insured{:}{PERSON}", "Claimant{:}the insured's {REL}", "Pay to account{:}{ACCOUNT}",
              "Policy no.{:}{@TICKET}", "Date of loss{:}{@DATE}", "Location{:}outside {ADDRESS}",
              "Phone{:}{PHONE}", "Amount claimed{:}{@AMOUNT}", "Provider{:}{Riverside Family Clinic|Oakwood Dental}",
              "Beneficiary{:}{PERSON2} ({REL})", "Insured DOB{:}{DOB}"),
    ),
    lines=(3, 7), long_lines=12, ctx={"form": True},
)

FORUM = Genre(
    "forum",
    ko=Pools(
        head=("[자유게시판] {질문|후기|잡담}", "상품 리뷰 ★★★★☆", "Q&A", "맘카페 글", "중고거래 글", "댓글"),
        body=("{@BRAND} 다녀왔는데 괜찮네요", "{REL}랑 같이 갔어요", "배송 빨라요 주문번호 {@ORDER}",
              "판매자분 연락처 {PHONE} 로 문자 주세요", "직거래 장소 {ADDRESS} 근처", "{@RELWORD} 이벤트 참여했어요",
              "가격 {@AMOUNT}면 싼 편인가요?", "{PERSON} 강사님 수업 추천합니다", "메일 {EMAIL} 으로 쪽지 주세요",
              "ㅋㅋ 저도 그래요", "별로였어요 재구매 X", "사진은 댓글에"),
    ),
    en=Pools(
        head=("[Forum] {Question|Review|Off-topic}", "Product review ★★★★☆", "Q&A", "Parents forum post",
              "Marketplace listing", "Comment"),
        body=("Went to {@BRAND}, not bad", "Took {REL} along", "Fast shipping, order {@ORDER}",
              "Text me at {PHONE} if interested", "Pickup near {ADDRESS}", "Entered the {@RELWORD} raffle",
              "Is {@AMOUNT} a fair price?", "Highly recommend coach {PERSON}", "DM me or email {EMAIL}",
              "lol same", "Meh, would not buy again", "Pics in comments"),
    ),
    lines=(1, 5), long_lines=12, head_p=0.6, tail_p=0.0,
)

STRUCTURED = Genre(
    "structured",
    ko=Pools(
        head=("name,phone,email,addr", "id\tcustomer\tstatus", "-- export.jsonl --", "[app.log]", "# CSV 내보내기", "query result:"),
        body=('{"name": "{PERSON}", "phone": "{PHONE}", "order": "{@ORDER}"}', "{@TICKET},{PERSON},{PHONE},{EMAIL}",
              'user={EMAIL} ip={@IP} action=login', '{"addr": "{ADDRESS}", "tracking": "{@TRACKING}"}',
              "payment ok card={CARD} amount={@AMOUNT}", "payout account={ACCOUNT} status=done",
              '{"dob": "{DOB}", "rrn": "{RRN}"}', "GET /api/orders/{@ORDER} 200", "cron job finished in 12s",
              "{@PRODUCT},{@AMOUNT},재고있음", '{"guardian": "{REL}", "name": "{PERSON2}"}'),
    ),
    en=Pools(
        head=("name,phone,email,addr", "id\tcustomer\tstatus", "-- export.jsonl --", "[app.log]", "# CSV export", "query result:"),
        body=('{"name": "{PERSON}", "phone": "{PHONE}", "order": "{@ORDER}"}', "{@TICKET},{PERSON},{PHONE},{EMAIL}",
              "user={EMAIL} ip={@IP} action=login", '{"addr": "{ADDRESS}", "tracking": "{@TRACKING}"}',
              "payment ok card={CARD} amount={@AMOUNT}", "payout account={ACCOUNT} status=done",
              '{"dob": "{DOB}"}', "GET /api/orders/{@ORDER} 200", "cron job finished in 12s",
              "{@PRODUCT},{@AMOUNT},in stock", '{"emergency_contact": "{REL}", "name": "{PERSON2}"}'),
    ),
    lines=(1, 6), long_lines=30, prefix=log_prefix, tail_p=0.0, head_p=0.5,
)

GENRES: tuple[Genre, ...] = (CHAT, EMAIL, FORM, CALLNOTE, TRANSCRIPT, OCR, TICKET, DELIVERY,
                             CLINIC, HR, LEASE, SCHOOL, SMS, MINUTES, CV, INSURANCE, FORUM,
                             STRUCTURED)
GENRE_NAMES: tuple[str, ...] = tuple(g.name for g in GENRES)


def compose(genre: Genre, rng: random.Random, lang: str, variant: int, *, negative: bool,
            long: bool) -> Doc:
    """Compose one document of `genre` (see the module docstring)."""
    pools = genre.ko if lang == "ko" else genre.en
    d = Doc(rng, lang, variant, negative=negative, ctx=dict(genre.ctx))
    if lang == "en" and rng.random() < 0.3:
        d.ctx["uk"] = True
    if pools.head and rng.random() < genre.head_p:
        d.line(pools.head[variant % len(pools.head)])
    lo, hi = genre.lines
    n = rng.randrange(hi + 1, genre.long_lines + 1) if long and genre.long_lines > hi \
        else rng.randrange(lo, hi + 1)
    order: list[str] = []
    for i in range(n):
        prefix = genre.prefix(d, i) if genre.prefix else ""
        for _ in range(6):  # a negative document skips lines with slots: try another
            if not order:  # each line once before any repeats
                order = rng.sample(pools.body, len(pools.body))
            if d.line(order.pop(), prefix):
                break
        else:
            d.line(rng.choice([b for b in pools.body if not d.has_slots(b)]), prefix)
    if pools.tail and rng.random() < genre.tail_p:
        d.line(rng.choice(pools.tail))
    if genre.post:
        genre.post(d)
    return d
