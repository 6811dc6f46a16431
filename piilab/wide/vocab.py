"""Vocabularies of the wide corpus (chapter 02, "the wide profile").

Data only, written for this course. Korean names are composed (surname + two given-name
syllables), so the name space is large without a long list; English names come from the
pinned Faker package (`faker_names`), read as plain sorted lists so that the corpus does not
depend on Faker's own random state. Organisation, shop, bank and school names are invented.
Nothing here is taken from the hand-written holdout (`data/holdout/`): a test checks that no
holdout document shares a 25-character substring with the wide corpus.
"""

from __future__ import annotations

import functools

# --- Korean person names --------------------------------------------------------------
# 111 surnames: single-syllable ones, then the two-syllable ones (황보, 남궁, ...).
KO_SURNAMES = tuple(
    "김 이 박 최 정 강 조 윤 장 임 한 오 서 신 권 황 안 송 류 전 홍 고 문 양 손 배 백 허 유 남 "
    "심 노 하 곽 성 차 주 우 구 민 진 나 지 엄 원 채 천 방 공 현 함 변 염 여 추 도 소 석 선 설 "
    "마 길 연 위 표 명 기 반 라 왕 금 옥 육 인 맹 제 모 탁 국 어 은 편 용 예 경 봉 사 부 가 복 "
    "태 목 형 피 두 감 음 빈 동 온 호 범 좌 승 황보 남궁 제갈 선우 독고 사공 서문".split()
)
# Given names: a first and a second syllable (42 x 40 = 1,680 pairs).
KO_GIVEN_FIRST = tuple(
    "민 서 지 수 예 하 도 윤 주 시 은 채 다 유 현 준 승 태 가 나 소 세 재 건 우 혜 정 영 "
    "진 성 동 상 경 미 보 아 종 한 규 희 기 인".split()
)
KO_GIVEN_SECOND = tuple(
    "준 연 우 아 은 윤 호 린 원 율 현 빈 진 서 민 희 영 수 훈 혁 석 람 솔 결 비 온 담 찬 "
    "경 란 미 숙 철 식 규 나 별 하 랑 환".split()
)
# Romanized surnames for e-mail local parts and romanized names in English text.
KO_ROMAN_SURNAMES = ("kim", "lee", "park", "choi", "jung", "kang", "cho", "yoon", "jang", "lim",
                     "han", "oh", "seo", "shin", "kwon", "hwang", "ahn", "song", "ryu", "hong",
                     "ko", "moon", "yang", "son", "bae", "baek", "heo", "nam", "noh", "ha")
KO_ROMAN_GIVEN = ("minjun", "seoyeon", "jiwoo", "haeun", "doyun", "seojun", "yuna", "jihoon",
                  "subin", "yejin", "hyunwoo", "eunji", "taeyang", "sora", "jaewon", "nari",
                  "dongha", "mirae", "seungmin", "gaeun", "hajin", "yerin", "junho", "chaewon",
                  "sihyun", "dabin", "woojin", "hyerin", "sangmin", "kyungmi")

# --- Korean addresses -----------------------------------------------------------------
KO_REGIONS = (
    ("서울특별시", ("강남구", "서초구", "송파구", "마포구", "용산구", "성동구", "노원구", "관악구",
                "동작구", "은평구", "강서구", "중랑구", "광진구", "영등포구")),
    ("서울", ("종로구", "중구", "성북구", "도봉구", "구로구", "금천구")),
    ("부산광역시", ("해운대구", "수영구", "사하구", "동래구", "남구", "부산진구", "금정구")),
    ("대구광역시", ("수성구", "달서구", "북구", "중구")),
    ("인천광역시", ("연수구", "남동구", "부평구", "서구", "계양구")),
    ("광주광역시", ("서구", "북구", "광산구")),
    ("대전광역시", ("유성구", "서구", "대덕구")),
    ("울산광역시", ("남구", "중구", "울주군")),
    ("세종특별자치시", ("",)),
    ("경기도", ("수원시 영통구", "성남시 분당구", "용인시 수지구", "화성시", "안양시 동안구",
             "부천시", "남양주시", "파주시", "김포시", "평택시", "의정부시", "하남시")),
    ("강원특별자치도", ("춘천시", "원주시", "강릉시")),
    ("충청북도", ("청주시 흥덕구", "충주시")),
    ("충청남도", ("천안시 서북구", "아산시", "공주시")),
    ("전북특별자치도", ("전주시 완산구", "군산시", "익산시")),
    ("전라남도", ("여수시", "순천시", "목포시")),
    ("경상북도", ("포항시 남구", "구미시", "경주시", "안동시")),
    ("경상남도", ("창원시 의창구", "김해시", "진주시", "양산시")),
    ("제주특별자치도", ("제주시", "서귀포시")),
)
# Road-name stems: a road is a stem + 로/길/대로 (+ a side-street number: 12번길).
KO_ROAD_STEMS = tuple(
    "은하수 물푸레 새봄 가온 한울 너울 들꽃 햇살 바람개비 참나무 느티 청보리 달맞이 꽃마을 "
    "솔숲 매화 장미원 무지개 구름다리 별내 푸른들 노을 둥지 아라 누리 다솜 미리내 시냇물 "
    "샛별 하늘채 호수공원 은행나무 소나무 대나무 버들 연꽃 갈대 도담 온누리 단풍 새싹 산들 "
    "이슬 오솔 돌담 기와 모래내 강변 중앙 시청 역전 공단 학교 시장 문화 평화 통일 희망".split()
)
KO_ROAD_SUFFIX = ("로", "로", "길", "대로")
# Lot-number (지번) addresses: a neighbourhood (동/읍/면/리) and a lot number.
KO_DONG_STEMS = tuple(
    "가온 신촌 새말 원당 구룡 대흥 삼성 신정 봉천 상계 중계 하계 월계 도화 송정 평촌 산본 "
    "매탄 영통 정자 서현 야탑 청담 대치 방배 잠원 반포 공덕 합정 연남 망원 성산 상암 신월 "
    "화곡 등촌 가양 목동 문래 당산 대림 신길 흑석 노량진 사당 방학 쌍문 창동".split()
)
KO_BUILDING_NAMES = ("한빛아파트", "새솔마을", "푸른숲빌라", "누리타워", "가온오피스텔",
                     "햇살주공", "별빛맨션", "다온하이츠", "미리내빌", "청솔아파트", "은하빌딩",
                     "온빛캐슬")

# --- English addresses ----------------------------------------------------------------
US_CITIES = (("Springfield", "IL"), ("Riverton", "WY"), ("Fairview", "OR"), ("Madison", "WI"),
             ("Franklin", "TN"), ("Georgetown", "TX"), ("Salem", "MA"), ("Clinton", "IA"),
             ("Greenville", "SC"), ("Bristol", "CT"), ("Dover", "DE"), ("Oxford", "MS"),
             ("Arlington", "VA"), ("Ashland", "KY"), ("Burlington", "VT"), ("Chester", "PA"),
             ("Dayton", "OH"), ("Hudson", "NY"), ("Lakewood", "CO"), ("Marion", "IN"),
             ("Milford", "NH"), ("Newport", "RI"), ("Plymouth", "MN"), ("Auburn", "AL"),
             ("Oakland", "CA"), ("Tucson", "AZ"), ("Boise", "ID"), ("Reno", "NV"))
US_STREET_STEMS = ("Maple", "Oak", "Cedar", "Pine", "Elm", "Willow", "Birch", "Chestnut",
                   "Walnut", "Spruce", "Hickory", "Juniper", "Laurel", "Magnolia", "Sycamore",
                   "Aspen", "Hawthorn", "Linden", "Poplar", "Sequoia", "Meadow", "Harbor",
                   "Lakeview", "Hillcrest", "Ridge", "Valley", "Sunset", "Highland", "Park",
                   "Church", "Mill", "Bridge", "Station", "Market", "Union", "Liberty",
                   "Franklin", "Jefferson", "Lincoln", "Madison", "Washington", "Adams",
                   "Orchard", "Prospect", "River", "Spring", "Summit", "Forest")
US_STREET_TYPES = ("St", "Street", "Ave", "Avenue", "Rd", "Road", "Blvd", "Ln", "Lane", "Dr",
                   "Drive", "Ct", "Way", "Pl", "Terrace", "Pkwy")
US_UNITS = ("Apt", "Apt.", "Unit", "Suite", "#")
UK_TOWNS = ("Ashford", "Bramley", "Chesterfield", "Dorking", "Ely", "Frome", "Harrogate",
            "Ipswich", "Kendal", "Ludlow", "Malvern", "Norwich", "Oakham", "Penrith",
            "Reading", "Stroud", "Truro", "Whitby", "York", "Bath", "Leeds", "Exeter")
UK_STREET_TYPES = ("Road", "Lane", "Close", "Crescent", "Gardens", "Mews", "Grove", "Terrace",
                   "Street", "Way", "Place", "Row")
UK_POSTCODE_AREAS = ("AB", "BA", "BN", "CB", "EX", "HG", "IP", "LA", "LS", "NR", "OX", "PE",
                     "RG", "SY", "TR", "YO", "WR", "GL", "CA", "LE")

# --- Relationship words (REL) ---------------------------------------------------------
KO_REL = (
    "어머니", "엄마", "아버지", "아빠", "남편", "아내", "와이프", "부인", "아들", "딸", "형", "오빠",
    "누나", "언니", "동생", "남동생", "여동생", "할머니", "할아버지", "외할머니", "외할아버지",
    "친할머니", "손자", "손녀", "삼촌", "이모", "고모", "외삼촌", "큰아버지", "작은아버지", "숙모",
    "이모부", "고모부", "사촌", "조카", "장인", "장모", "시어머니", "시아버지", "며느리", "사위",
    "형부", "처남", "시누이", "배우자", "큰딸", "막내아들", "작은딸", "첫째 아들", "둘째 딸",
    "친정엄마", "시댁 어른", "남자친구", "여자친구", "약혼자", "어머님", "아버님", "쌍둥이 동생",
)
EN_REL = (
    "my mother", "my mom", "my mum", "my father", "my dad", "my husband", "my wife", "my son",
    "my daughter", "my sister", "my brother", "my grandmother", "my grandma", "my grandfather",
    "my grandpa", "my aunt", "my uncle", "my cousin", "my niece", "my nephew", "my partner",
    "my fiancé", "my fiancée", "my stepmother", "my stepfather", "my stepson", "my stepdaughter",
    "my mother-in-law", "my father-in-law", "my son-in-law", "my daughter-in-law",
    "my sister-in-law", "my brother-in-law", "my boyfriend", "my girlfriend", "my twin brother",
    "my twin sister", "my eldest son", "my youngest daughter", "my granddaughter", "my grandson",
    "my late husband", "my ex-wife", "our daughter", "our son", "her husband", "his wife",
    "their mother",
)
EN_REL_FORM = ("mother", "father", "spouse", "husband", "wife", "daughter", "son", "sister",
               "brother", "grandmother", "grandfather", "partner", "guardian (aunt)",
               "legal guardian (uncle)", "stepfather", "stepmother", "mother-in-law")

# --- Hard negatives: words that look like PII but are not in this experiment -----------
# Relationship words in non-personal senses (no REL span).
KO_REL_DECOYS = ("어머니회", "아버지학교", "형님반점", "할머니손맛 김치", "엄마손 칼국수",
                 "언니네 분식", "아빠다리", "어버이날 특가", "삼촌네 과일가게", "이모카세",
                 "효도 선물 세트", "가족 요금제", "오빠 믿지 티셔츠")
EN_REL_DECOYS = ("Mother's Day sale", "Father's Day brunch", "Big Brother mode",
                 "sister company", "mother board", "Grandma's Kitchen", "Uncle Sam's Diner",
                 "Parent-Teacher Association", "family plan", "son of a gun", "brother printer",
                 "the Sisters of Mercy Hospital")
# Company and brand names that look like person names (no PERSON span).
KO_BRANDS = ("한결상사", "김가네 식당", "박가부대", "이서방 정육점", "정다운 약국", "최고당",
             "윤슬 커피", "서연빌딩", "지우개 문구", "민준물산", "도윤테크", "하은제과")
EN_BRANDS = ("Harper & Lane", "Wells & Porter", "Jackson Hewitt Labs", "Morgan Supply",
             "Carter Logistics", "Baker Street Books", "Ford Field Cafe", "Wendy's Diner",
             "Sullivan Brothers Moving", "Dell Harbor Inn", "Hudson Bay Outfitters")


@functools.cache
def faker_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """English first and last names from the pinned Faker package (sorted, deduplicated).

    Faker (MIT licence) is pinned in `pyproject.toml` (`wide` extra): its name lists are
    large (1,364 first and 3,304 last names over the en_US, en_GB, en_IE and en_NZ
    locales), maintained, and read here as plain data, so Faker's own random generator is
    never used and the corpus depends only on the pinned version and our seed.
    """
    try:
        import importlib

        first: set[str] = set()
        last: set[str] = set()
        for locale in ("en_US", "en_GB", "en_IE", "en_NZ"):
            provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
            for attr in ("first_names", "first_names_female", "first_names_male"):
                first.update(getattr(provider, attr, ()))
            last.update(provider.last_names)
    except ImportError as exc:  # pragma: no cover - the extra is installed by `make`
        from piilab.wide.errors import WideCorpusError

        raise WideCorpusError("the wide profile needs Faker: pip install 'piilab[wide]'") from exc
    # Names with spaces or apostrophes would need their own matching rules: keep simple ones.
    def keep(name: str) -> bool:
        return name.isalpha() and name[0].isupper() and 2 <= len(name) <= 12

    return tuple(sorted(filter(keep, first))), tuple(sorted(filter(keep, last)))
