"""Document templates and vocabularies of the synthetic corpus (chapter 02).

This module is *data*: the generator (`piilab.generator`) reads it. Each template
is a small text in one language and one setting, with three kinds of braces:

- ``{PERSON}``, ``{PHONE2}``, ...   a PII slot: the label, optionally followed by a
  digit that makes a second, different value of the same label in one document.
  Using the same slot twice repeats the same value (token reuse);
- ``{PERSON@spaced}``               the same value as ``{PERSON}``, written with a
  space between its characters (``김 가 상``): a variant the masker must catch;
- ``{@ORDER}``, ``{@AMOUNT}``, ...  a decoy: something number-like that is *not* PII in
  this experiment (order numbers, amounts, product codes, company switchboards,
  dates that are not birth dates, reference numbers);
- ``{a|b|c}``                       a phrasing choice, picked at random.

A template with no PII slot makes a negative (PII-free) document.

What this data deliberately is not: realistic in distribution. Settings, phrasings
and vocabularies are small on purpose so that learners can read every template; the
same templates feed every split (chapter 05 measures what that does to evaluation).
Names of banks, shops and clinics are invented; numbers are made invalid by
`piilab.checksums` and placeholder ranges.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Template:
    """One template family: `template_id` is kept on every record it produces."""

    template_id: str
    language: str  # "ko" | "en"
    setting: str  # banking, cards, insurance, clinic, hr, delivery, customer_service
    text: str
    weight: float = 1.0


SETTINGS: tuple[str, ...] = (
    "banking",
    "cards",
    "insurance",
    "clinic",
    "hr",
    "delivery",
    "customer_service",
)

_KO = [
    # --- banking -----------------------------------------------------------------
    ("ko-bank-transfer", "banking",
     "{PERSON} 고객님, {가람은행|누리은행|별빛은행} 계좌 {ACCOUNT} 앞 {@AMOUNT} 이체가 접수되었습니다. "
     "{본인 확인 연락처|등록된 휴대폰 번호|연락처}: {PHONE}. 문의는 고객센터 {@SWITCHBOARD}."),
    ("ko-bank-open", "banking",
     "계좌 개설 신청서\n성명: {PERSON}\n{주민등록번호|주민번호}: {RRN}\n주소: {ADDRESS}\n"
     "{휴대폰|휴대전화|연락처}: {PHONE}\n신규 계좌번호: {ACCOUNT}"),
    ("ko-bank-proxy", "banking",
     "저는 예금주 {PERSON} 님의 {REL}입니다. 대리 출금을 요청합니다. 계좌번호는 {ACCOUNT}이고, "
     "위임장 서명란에는 {PERSON@spaced}{라고|이라고} 적혀 있습니다. 예금주 {연락처|전화번호}는 {PHONE}입니다."),
    ("ko-bank-notice", "banking",
     "[가람은행 안내] 정기예금 금리가 {@DATE}부터 변경됩니다. 자세한 내용은 대표번호 {@SWITCHBOARD}, "
     "안내번호 {@TICKET}{을|를} 참고해 주세요.", 0.6),
    # --- cards -------------------------------------------------------------------
    ("ko-card-lost", "cards",
     "카드 분실 신고 접수\n회원명: {PERSON}\n카드번호: {CARD}\n{연락처|휴대폰 번호}: {PHONE}\n"
     "재발급 카드 배송지: {ADDRESS}"),
    ("ko-card-dispute", "cards",
     "{PERSON} 님 카드({CARD}) 이용내역 이의제기 건입니다. 가맹점 주문번호 {@ORDER}, 금액 {@AMOUNT}. "
     "처리 결과는 {EMAIL}{으로 안내드리겠습니다| 주소로 보내 드립니다}."),
    ("ko-card-family", "cards",
     "가족카드 신청: 본회원 {PERSON}, 가족회원은 본회원의 {REL} {PERSON2}입니다. "
     "가족회원 {생년월일|생일}: {DOB}, {휴대전화|연락처}: {PHONE}."),
    ("ko-card-bill", "cards",
     "[누리카드] 이번 달 결제 예정 금액은 {@AMOUNT}입니다. 결제일은 {@DATE}이며 할부 상품 {@PRODUCT} "
     "관련 문의는 {@SWITCHBOARD}{으로 해 주세요|에서 받습니다}.", 0.6),
    # --- insurance ---------------------------------------------------------------
    ("ko-ins-claim", "insurance",
     "보험금 청구서\n피보험자: {PERSON} ({RRN})\n청구인: 피보험자의 {REL}\n지급 계좌: {ACCOUNT}\n"
     "{연락처|청구인 연락처}: {PHONE}"),
    ("ko-ins-change", "insurance",
     "{PERSON} 님의 계약자 정보 변경 요청입니다. 새 주소는 {ADDRESS}, 이메일은 {EMAIL}입니다. "
     "변경이 끝나면 {PERSON} 님께 확인 문자를 보내 주세요."),
    ("ko-ins-call", "insurance",
     "상담 메모: 고객이 성함을 한 글자씩 {PERSON@spaced}{라고|이라고} 불러 줌. 전산 등록명은 {PERSON}. "
     "{생년월일|생년월일 확인}: {DOB}, 회신 번호 {PHONE}."),
    ("ko-ins-renewal", "insurance",
     "[안심손해보험] 자동차보험 만기일은 {@DATE}입니다. 갱신 보험료는 {@AMOUNT}, 증권번호는 {@TICKET}. "
     "문의 {@SWITCHBOARD}", 0.6),
    # --- clinic ------------------------------------------------------------------
    ("ko-clinic-intake", "clinic",
     "초진 접수표\n환자명: {PERSON}\n생년월일: {DOB}\n주민번호: {RRN}\n연락처: {PHONE}\n"
     "보호자: {REL} {PERSON2} ({PHONE2})"),
    ("ko-clinic-reminder", "clinic",
     "{PERSON} 님, {@DATE} 진료 예약이 확정되었습니다. 안내 문자는 {PHONE}{으로 보냈고| 번호로 발송했고}, "
     "검사 결과지는 {EMAIL}{으로| 주소로} 보내 드립니다. 변경 문의: 대표번호 {@SWITCHBOARD}"),
    ("ko-clinic-consent", "clinic",
     "검사 동의서\n환자 {PERSON}의 {REL}인 본인은 검사에 동의합니다.\n환자 주소: {ADDRESS}\n"
     "보호자 성명: {PERSON2}\n서명: {PERSON2@spaced}"),
    ("ko-clinic-flu", "clinic",
     "[바른의원] 독감 예방접종을 {@DATE}부터 시작합니다. 접종 비용은 {@AMOUNT}이며 예약은 {@SWITCHBOARD}, "
     "접종 코드는 {@PRODUCT}입니다.", 0.6),
    # --- hr ----------------------------------------------------------------------
    ("ko-hr-onboard", "hr",
     "입사 서류 확인: {PERSON}, 주민등록번호 {RRN}, 급여 계좌 {ACCOUNT}, "
     "비상연락처 {REL} {PHONE}."),
    ("ko-hr-payroll", "hr",
     "{PERSON} 사원의 급여 이체 계좌가 {ACCOUNT}{으로 변경되었습니다|(으)로 바뀌었습니다}. "
     "사내 메일 {EMAIL}{으로|에서} 확인 바랍니다. 담당자는 {PERSON} 사원에게 회신 완료."),
    ("ko-hr-leave", "hr",
     "경조 휴가 신청\n신청자: {PERSON}\n사유: {REL} 병원 입원\n휴가 중 연락처: {PHONE}\n"
     "자택 주소: {ADDRESS}"),
    ("ko-hr-training", "hr",
     "[인사팀 공지] {@DATE} 전사 교육이 진행됩니다. 교육비 {@AMOUNT}는 회사가 부담합니다. "
     "과정 코드 {@PRODUCT}, 문의는 대표번호 {@SWITCHBOARD}.", 0.6),
    # --- delivery ----------------------------------------------------------------
    ("ko-deliv-address", "delivery",
     "배송지 변경 요청: 주문번호 {@ORDER}, 받는 분 {PERSON}, 새 주소 {ADDRESS}, {연락처|휴대폰} {PHONE}."),
    ("ko-deliv-proxy", "delivery",
     "기사 메모: 수령인 {PERSON} 부재로 {REL}에게 전달함. 수령인 번호 {PHONE}, "
     "같은 번호 {PHONE}{으로| 앞으로} 완료 문자 발송."),
    ("ko-deliv-parcel", "delivery",
     "{PERSON@spaced} 님 앞으로 온 소포입니다. 송장상 이름은 {PERSON}, 주소는 {ADDRESS}. "
     "착불 금액 {@AMOUNT}."),
    ("ko-deliv-shipped", "delivery",
     "[빠른택배] 주문번호 {@ORDER} 상품({@PRODUCT})이 {@DATE}에 출고되었습니다. 배송 문의 {@SWITCHBOARD}",
     0.6),
    # --- customer service --------------------------------------------------------
    ("ko-cs-profile", "customer_service",
     "상담 기록: {PERSON} 고객이 회원 이메일 {EMAIL}, 휴대폰 {PHONE} 변경을 요청함. "
     "본인 확인은 생년월일 {DOB}{으로 진행| 대조로 완료}."),
    ("ko-cs-refund", "customer_service",
     "환불 요청 건 - 주문 {@ORDER}, 환불 계좌 {ACCOUNT} (예금주 {PERSON}), 결제 카드 {CARD}."),
    ("ko-cs-hijack", "customer_service",
     "민원 접수: 제 {REL} 명의 계정({EMAIL})이 도용된 것 같습니다. 명의자는 {PERSON}이고, "
     "연락은 {PHONE}{으로 부탁드립니다| 번호로 주세요}."),
    ("ko-cs-queue", "customer_service",
     "[고객센터 안내] 상담 대기 번호 {@TICKET}. 주문 {@ORDER}의 환불 금액 {@AMOUNT}{은|이} {@DATE}에 "
     "처리됩니다. 대표번호 {@SWITCHBOARD}", 0.6),
]

_EN = [
    # --- banking -----------------------------------------------------------------
    ("en-bank-wire", "banking",
     "Hi {PERSON}, your wire of {@AMOUNT} to account {ACCOUNT} at Maple Trust Bank is pending. "
     "{We will call you at|A banker will phone you on} {PHONE} to confirm. Questions? Call {@SWITCHBOARD}."),
    ("en-bank-notice", "banking",
     "Maple Trust Bank notice: savings rates change on {@DATE}. Reference {@TICKET}. "
     "Customer line {@SWITCHBOARD}.", 0.6),
    # --- cards -------------------------------------------------------------------
    ("en-card-lost", "cards",
     "Card member {PERSON} reported card {CARD} lost. Replacement ships to {ADDRESS}. "
     "{Contact on file|Email on record}: {EMAIL}."),
    ("en-card-authuser", "cards",
     "Customer {PERSON} asked to add {REL} as an authorized user on card {CARD}. "
     "{Primary phone|Callback number}: {PHONE}."),
    # --- insurance ---------------------------------------------------------------
    ("en-ins-claim", "insurance",
     "Claim form\nInsured: {PERSON}\n{Date of birth|DOB}: {DOB}\nMailing address: {ADDRESS}\n"
     "Payout account: {ACCOUNT}"),
    ("en-ins-renewal", "insurance",
     "Policy {@TICKET} renews on {@DATE}. Your premium is {@AMOUNT}. Call {@SWITCHBOARD} with questions.",
     0.6),
    # --- clinic ------------------------------------------------------------------
    ("en-clinic-intake", "clinic",
     "Patient intake\nName: {PERSON}\nDOB: {DOB}\nPhone: {PHONE}\n"
     "Emergency contact: {PERSON2} ({REL}), {PHONE2}"),
    ("en-clinic-reminder", "clinic",
     "Reminder for {PERSON}: your appointment is on {@DATE}. Reply to {EMAIL} or call {PHONE}. "
     "{PERSON}, please bring your insurance card."),
    # --- hr ----------------------------------------------------------------------
    ("en-hr-onboard", "hr",
     "New hire {PERSON}: direct deposit to account {ACCOUNT}, home address {ADDRESS}, "
     "{personal email|private email} {EMAIL}."),
    ("en-hr-leave", "hr",
     "Leave request from {PERSON}: I need to care for {REL} after surgery. "
     "{I can be reached at|My cell is} {PHONE}."),
    ("en-hr-expat", "hr",
     "Relocation file for {PERSON}: Korean resident registration number {RRN}, date of birth {DOB}, "
     "emergency contact {REL} at {PHONE}."),
    # --- delivery ----------------------------------------------------------------
    ("en-deliv-change", "delivery",
     "Order {@ORDER}: please deliver to {ADDRESS} instead. Recipient {PERSON}, phone {PHONE}."),
    ("en-deliv-shipped", "delivery",
     "Your order {@ORDER} ({@PRODUCT}) shipped on {@DATE}. Total charged {@AMOUNT}. "
     "Support: {@SWITCHBOARD}.", 0.6),
    # --- customer service --------------------------------------------------------
    ("en-cs-dispute", "customer_service",
     "Agent note: caller {PERSON} ({EMAIL}) disputed a charge of {@AMOUNT} on card {CARD}. "
     "Verified with {the DOB|the date of birth|birth date} {DOB}."),
    ("en-cs-kyc", "customer_service",
     "KYC note: {PERSON} provided a Korean RRN ({RRN}) and the address {ADDRESS} "
     "for the overseas transfer."),
]

TEMPLATES: tuple[Template, ...] = tuple(
    Template(t[0], t[0][:2], t[1], t[2], *t[3:]) for t in (*_KO, *_EN)
)

# --------------------------------------------------------------------------------
# Vocabularies. Small on purpose (see the module docstring).
# --------------------------------------------------------------------------------

KO_SURNAMES = ("김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "한", "오", "서", "신",
               "권", "황", "송", "류", "홍", "남궁", "선우")
KO_GIVEN = ("서연", "민준", "지우", "하은", "도윤", "예린", "시우", "수아", "주원", "지호", "채원",
            "현우", "유진", "건우", "다은", "승민", "소율", "태윤", "나연", "재희", "가상", "은호",
            "민서", "하람", "윤슬", "지안", "도하", "서준", "예서", "로운")
# Romanized given names and surnames for e-mail local parts (not real transliteration rules).
KO_ROMAN_GIVEN = ("seoyeon", "minjun", "jiwoo", "haeun", "doyun", "yerin", "siwoo", "sua",
                  "juwon", "jiho", "chaewon", "hyunwoo", "yujin", "gunwoo", "daeun")
KO_ROMAN_SURNAMES = ("kim", "lee", "park", "choi", "jung", "kang", "cho", "yoon", "jang", "han")

EN_FIRST = ("Emily", "Daniel", "Olivia", "Marcus", "Hannah", "Gabriel", "Natalie", "Trevor",
            "Priya", "Jonathan", "Rebecca", "Samuel", "Vanessa", "Elliott", "Camila", "Theodore",
            "Maya", "Kenneth", "Isabel", "Victor")
EN_LAST = ("Carter", "Nguyen", "Ramirez", "Whitfield", "Okafor", "Lindqvist", "Brennan",
           "Castillo", "Harrington", "Delgado", "Petrov", "Sullivan", "Matsuda", "Fairbanks",
           "Abernathy", "Kowalski")

KO_REL = ("어머니", "아버지", "남편", "아내", "아들", "할머니", "할아버지", "배우자", "언니", "오빠",
          "누나", "손자")
EN_REL_FIRST_PERSON = ("my husband", "my wife", "my mother", "my father", "my son",
                       "my daughter", "my sister", "my brother")
EN_REL_FORM = ("mother", "father", "spouse", "husband", "wife", "daughter")
# Templates whose {REL} reads as a form field rather than "my ..." speech.
EN_REL_FORM_TEMPLATES = frozenset({"en-clinic-intake"})

EMAIL_DOMAINS = ("example.com", "example.net", "example.org")

KO_ADDRESS_CITIES = (
    ("서울특별시", ("마포구", "강남구", "종로구", "송파구", "관악구")),
    ("부산광역시", ("해운대구", "수영구", "동래구")),
    ("대구광역시", ("수성구", "달서구")),
    ("인천광역시", ("연수구", "부평구")),
    ("대전광역시", ("유성구", "서구")),
    ("경기도 성남시", ("분당구", "수정구")),
    ("경기도 수원시", ("영통구", "팔달구")),
)
KO_ROADS = ("은행나무로", "솔빛로", "한빛로", "새봄길", "푸른숲로", "달맞이길", "햇살로", "별마루로",
            "느티나무길", "물빛로")
EN_STREETS = ("Maple", "Oak", "Cedar", "Birch", "Willow", "Lakeview", "Hillcrest", "Juniper",
              "Sycamore", "Meadowbrook")
EN_STREET_TYPES = ("Street", "Avenue", "Road", "Lane", "Drive", "Court")
EN_CITIES = (("Springfield", "IL"), ("Fairview", "OR"), ("Riverton", "WY"), ("Greenville", "SC"),
             ("Madison", "WI"), ("Clinton", "IA"), ("Franklin", "TN"), ("Salem", "MA"))
EN_AREA_CODES = ("212", "312", "415", "617", "206", "512", "303", "404")

KO_SWITCHBOARD_PREFIXES = ("1588", "1577", "1544", "1600", "1666")
EN_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December")
