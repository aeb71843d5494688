// Test strings for the tokenizer agreement: hand-picked fragments per area (each also in NFD where that
// differs), every pair of areas glued by varied separators, random code point soup, and a few long runs.
// Deterministic (seeded mulberry32), so a failure reproduces.
//
// JavaScript strings are UTF-16: a lone surrogate has no UTF-8 form (Node would write it as U+FFFD, and
// JSON.stringify as a \udXXX escape our JSON reader rejects). Every case is checked for lone surrogates,
// so the cases are exactly the valid-UTF-8 strings; invalid UTF-8 input is covered by the C++ unit tests
// (utf8_lossy), not here.

export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const FRAGMENTS = {
  latin: ['café', 'naïve', 'Ångström', 'façade', 'São Paulo', 'Dvořák', 'Łódź', 'İstanbul', 'straße',
    'STRASSE', 'Œuvre', 'résumé', 'jalapeño', 'Zürich', 'ÉCOLE', 'Ærøskøbing', 'ĳssel', 'Ǆemal', 'ǅ ǆ',
    'Ỳên Ṩụ', 'ﬁnance ﬂow', 'Ω Å K', 'ſtraße'],
  combining: ['e\u0301', 'a\u0300\u0316', '\u0301abc', ' \u0301', '1\u0301', 'x\u20dd', '\u0e01\u0e34',
    'Z\u0351\u0352\u0357\u0358\u0334\u0335', 'a\u034fb', '\u0301\u0301\u0301', "'\u0301s", "'s\u0301",
    'n\u0303o\u0308', '\u20dd', 'A\u0488B', 'q\u0307\u0323', '.\u0301', '_\u0301x', '!\u0308!', '\u0300 \u0300',
    'ก\u0e31\u0e49', '\u0301\n', '\u093f\u0915'],
  cjk: ['你好，世界！', '日本語のテキスト、カタカナ。', '한국어 텍스트', '中文123数字', '𠀀𠀁𠀂', 'ｆｕｌｌｗｉｄｔｈ１２３',
    '〇一二三', '「引用」と『二重』', '東京都 渋谷区', 'ﾊﾝｶｸｶﾀｶﾅ', '㈱㍻', '漢字かな交じり文', '中 文 空 格', '我爱你。Yes!'],
  arabic: ['مرحبا بالعالم', 'السَّلَامُ عَلَيْكُمْ', '١٢٣٤', '؟،', '\u200fنص\u200f', 'العربية 2024',
    'שָׁלוֹם עוֹלָם', 'עברית', 'ﷺ', 'لا إله', '۱۲۳'],
  indic: ['नमस्ते दुनिया', 'हिन्दी', 'क्षत्रिय', '१२३', 'भारत।', 'தமிழ்', 'বাংলা ভাষা', 'ગુજરાતી', 'ਪੰਜਾਬੀ',
    'ಕನ್ನಡ', 'മലയാളം', 'සිංහල', 'ཀུན་', 'ကမ္ဘာ', 'ភាសាខ្មែរ', 'ລາວ', 'सं॰', 'क़'],
  other: ['Καλημέρα κόσμε', 'Привет, мир!', 'ПРИВЕТ', 'ქართული', 'Հայերեն', 'ሰላም ዓለም', 'ᠮᠣᠩᠭᠣᠯ\u180eᠪᠢᠴᠢᠭ',
    'ᚠᚢᚦ', 'ⴰⵣⵓⵍ', 'ᏣᎳᎩ', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𝐁𝐨𝐥𝐝', 'Ⓐⓑⓒ', 'ʰᵉˡˡᵒ', 'ß ẞ', 'ǈ', 'Ⅻ Ⅳ', '∑∫√∞≠≤', '℃ ℉ № ™'],
  emoji: ['👍', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇺🇸🇯🇵', '1️⃣', '#️⃣', '❤️', '🧑🏿‍🚀', '👩🏻‍❤️‍💋‍👨🏼', '☺︎',
    '🫠', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '😀😃😄', 'ok👌', '🙂 🙃', '⌚⌛', '©️®️', '🏻', '\u200d', 'a\u200db', '👋🏾hello',
    '🤦‍♂️', '😂😂😂'],
  digits: ['0', '123', '1234567890', '3.14159', '1,000,000', '2024-01-31', '0x1F', '1e-9', '٣٤', '१२', '²³',
    '½', '①②', '𝟘𝟙𝟚', '１２', '007', '12:30', '$100', '99%', '-42', '+1 (555) 123-4567', '۳۴',
    '3rd', 'v1.2.3', '10^6', '1/2', '७८९', '๑๒๓'],
  whitespace: [' ', '  ', '   ', '\t', '\t\t', '\n', '\n\n', '\n\n\n', '\r\n', '\r\n\r\n', '\r', '\r\r\n',
    ' \n ', 'a  b', 'a \n b', '  leading', 'trailing  ', 'a\u00a0b', '\u00a0', '\u2003', '\u3000', 'x\u3000y',
    '\u0085', 'a\u0085b', '\u2028', 'a\u2029b', '\u000b', '\u000c', 'a\u200bb', '\ufeff', 'a\u180eb', '\u1680',
    '\u202f', '\u205f', ' \t \n', '\t\n\t', ' \r\n ', '\n \n', '  \n\n  ', 'a\n\n\nb', 'end.\n', ' ', 'x ',
    ' x', '\u2000\u2001\u2002', 'a \u00a0 b', '\n\u00a0', '\u00a0\n', '\u0000', 'a\u0000b', '\u001b[0m'],
  code: ['int main() { return 0; }', 'def f(x):\n    return x**2\n', 'if (a && b) { x += 1; }\r\n',
    'const s = `${a}`;', '<div class="x">', 'SELECT * FROM t WHERE id = 1;', '#include <stdio.h>', 'a->b',
    'x != y', '// comment', '/* block */', 'std::vector<int> v{1,2,3};', '    indented', '\tTabbed',
    'fn main() {\n\tprintln!("hi");\n}', '{"key": [1, 2.5, null]}', '$ ls -la | grep x', 'i++;--j;',
    '@decorator\nclass A:\n    pass', 'x = y if z else w', '<<EOF', 'arr[i][j]', '#!/bin/sh', '...',
    '!!!???', '---', '===', '~/.config', 'C:\\Windows\\', 'http://example.com/a?b=c&d=e', 'a_b_c', '__init__'],
  contractions: ["DON'T", "don't", "we'll", "WE'LL", "We'Ll", "I'm", "I'M", "you're", "YOU'RE", "they've",
    "THEY'VE", "he'd", "HE'D", "it's", "IT'S", "'s", "'S", "'", "''", "'ll've", "rock'n'roll", "o'clock",
    'don’t', "'ſ", "'Ś", "isn't", "ISN'T", "'re'", "'sS", "'dd", "l'été", "'12", " 's", "'s'", "'T'", "'M",
    "'VE", "'Ll", "'lL", "'D", "x'S", "'\u212a", "'ſt", "'İ", "' s", "''s", "'\ns", "'ré", "'Réunion"],
  specials: ['<|im_start|>', '<|im_end|>', '<|endoftext|>', '<think>', '</think>',
    '<|im_start|>user\nhello<|im_end|>\n', '<think>\nreason\n</think>\n\nanswer', '<|im_start|><|im_end|>',
    '<|im_start', '|im_end|>', '<|im_end|', '<<|im_end|>>', '<thinking>', '<think></think>', 'a<|endoftext|>b',
    ' <|im_end|> ', '<|IM_END|>', '<|im_start|>assistant\n<think>\n\n</think>\n\n', '<think><think>',
    '</think >', '< think>', '<|im_end|><|im_end|>', '\n<|im_end|>\n', '<|im_start|>system\n',
    "'s<|im_end|>", '123<|endoftext|>456', '<|endoftext|><|endoftext|>', '</think>\n\n'],
};

const SEPARATORS = ['', ' ', '  ', '\n', '\t', '\r\n', ', ', '. ', '\n\n', ' \n', "'", '-', ''];

// Code point ranges for the random soup: [weight, lo, hi]. Weighted towards ASCII so words, spaces
// and punctuation interact with everything else.
const POOL = [
  [30, 0x20, 0x7e], [4, 0x09, 0x0d], [1, 0x00, 0x1f], [3, 0xa0, 0xff], [2, 0x100, 0x17f], [3, 0x300, 0x36f],
  [1, 0x483, 0x489], [2, 0x391, 0x3c9], [2, 0x410, 0x44f], [1, 0x5b0, 0x5ea], [2, 0x621, 0x669],
  [2, 0x900, 0x97f], [1, 0xe01, 0xe5b], [1, 0x1100, 0x11ff], [2, 0xac00, 0xd7a3], [3, 0x4e00, 0x9fff],
  [2, 0x3000, 0x30ff], [1, 0xff01, 0xff9f], [3, 0x2000, 0x206f], [1, 0x2070, 0x218b], [1, 0x2460, 0x24ff],
  [1, 0x20d0, 0x20f0], [3, 0x1f300, 0x1f64f], [2, 0x1f900, 0x1f9ff], [2, 0x1f3fb, 0x1f3ff],
  [1, 0x1f1e6, 0x1f1ff], [1, 0xe0020, 0xe007f], [1, 0xfe00, 0xfe0f], [1, 0x1d400, 0x1d7ff],
  [1, 0xe000, 0xe0ff], [1, 0xfdd0, 0xfdef], [1, 0xfff0, 0xffff], [1, 0x10fffd, 0x10ffff], [1, 0x0370, 0x03ff],
  [1, 0x1680, 0x1680], [1, 0x180e, 0x180e], [1, 0x0085, 0x0085], [1, 0x2028, 0x2029], [1, 0xfeff, 0xfeff],
  [2, 0x27, 0x27], [1, 0x17f, 0x17f], [1, 0x212a, 0x212a],
];

function pick(rng, list) {
  return list[Math.floor(rng() * list.length)];
}

function randomCodePoint(rng) {
  const total = POOL.reduce((s, p) => s + p[0], 0);
  let r = rng() * total;
  for (const [w, lo, hi] of POOL) {
    if ((r -= w) < 0) {
      const cp = lo + Math.floor(rng() * (hi - lo + 1));
      return cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp;
    }
  }
  return 0x61;
}

export function makeCases(seed = 20240531) {
  const rng = mulberry32(seed);
  const out = [];
  const add = (s) => {
    out.push(s);
    const nfd = s.normalize('NFD');
    if (nfd !== s) out.push(nfd);
    const nfc = s.normalize('NFC');
    if (nfc !== s) out.push(nfc);
  };
  out.push('');
  const areas = Object.keys(FRAGMENTS);
  for (const a of areas) for (const f of FRAGMENTS[a]) add(f);
  // Each fragment inside a sentence, with and without a leading space / trailing newline.
  for (const a of areas) {
    for (const f of FRAGMENTS[a]) {
      add(`The ${f} test`);
      add(` ${f}\n`);
    }
  }
  // Random pairs and chains of fragments from any areas.
  const all = areas.flatMap((a) => FRAGMENTS[a]);
  for (let i = 0; i < 1400; ++i) {
    const n = 2 + Math.floor(rng() * 5);
    let s = pick(rng, all);
    for (let k = 1; k < n; ++k) s += pick(rng, SEPARATORS) + pick(rng, all);
    add(s);
  }
  // Code point soup.
  for (let i = 0; i < 900; ++i) {
    const n = 1 + Math.floor(rng() * 40);
    let s = '';
    for (let k = 0; k < n; ++k) s += String.fromCodePoint(randomCodePoint(rng));
    add(s);
  }
  // Long runs: the regex backtracking paths and the JIT stack fallback.
  out.push(' '.repeat(5000), '\n'.repeat(3000), '\r\n'.repeat(1000), '9'.repeat(4000), 'a'.repeat(6000),
    ' \t'.repeat(2000) + 'x', 'ab '.repeat(3000), '\u0301'.repeat(1000), '👍🏽'.repeat(500),
    "DON'T ".repeat(500), ' '.repeat(4000) + '\n', '<|im_end|>'.repeat(300));
  const seen = new Set();
  return out.filter((s) => {
    if (/[\uD800-\uDFFF]/u.test(s) || seen.has(s)) return false;  // a lone surrogate (isWellFormed needs Node 20)
    seen.add(s);
    return true;
  });
}
