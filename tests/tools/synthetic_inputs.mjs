// Deterministic model inputs for the real-model tests and benchmarks. Only integer PRNG steps and
// Math.fround'ed float math, so every machine produces the same bytes.

// mulberry32: a tiny seeded PRNG; returns floats in [0, 1).
function makeRng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randInt(rng, lo, hi) {  // inclusive
  return lo + Math.floor(rng() * (hi - lo + 1));
}

// A synthetic printed page: white paper, lines of dark glyph-like strokes. Random noise is useless for
// PP-OCR det (its output stays ~0 everywhere); this gives a map with real text regions.
// Returns { type: 'float32', dims: [1, 3, size, size], data } normalised as PaddleOCR does: ((x/255)-0.5)/0.5.
export function makeTextPage(size = 640, seed = 20240611) {
  const rng = makeRng(seed);
  const rgb = new Uint8Array(size * size * 3);
  for (let i = 0; i < size * size; ++i) {  // slightly tinted paper
    rgb[3 * i] = 250; rgb[3 * i + 1] = 248; rgb[3 * i + 2] = 243;
  }
  const fill = (x0, y0, w, h, ink) => {
    for (let y = Math.max(0, y0); y < Math.min(size, y0 + h); ++y) {
      for (let x = Math.max(0, x0); x < Math.min(size, x0 + w); ++x) {
        const p = 3 * (y * size + x);
        rgb[p] = ink[0]; rgb[p + 1] = ink[1]; rgb[p + 2] = ink[2];
      }
    }
  };
  // One glyph: a few bars inside a w x h box, like strokes of Latin or CJK characters.
  const drawGlyph = (x0, y0, w, h, ink) => {
    const t = Math.max(2, Math.round(h / 8));
    const strokes = randInt(rng, 2, 4);
    for (let s = 0; s < strokes; ++s) {
      switch (randInt(rng, 0, 4)) {
        case 0: fill(x0 + randInt(rng, 0, w - t), y0, t, h, ink); break;  // full vertical
        case 1: fill(x0, y0 + randInt(rng, 0, 2) * ((h - t) >> 1), w, t, ink); break;  // horizontal
        case 2: fill(x0 + randInt(rng, 0, w - t), y0 + (h >> 2), t, h - (h >> 2), ink); break;  // short vertical
        case 3: {  // diagonal as a staircase of small squares
          const dir = rng() < 0.5 ? 1 : -1;
          for (let k = 0; k < h; k += Math.max(1, t >> 1)) {
            const x = dir > 0 ? x0 + Math.floor((k * (w - t)) / h) : x0 + w - t - Math.floor((k * (w - t)) / h);
            fill(x, y0 + k, t, t, ink);
          }
          break;
        }
        default: fill(x0 + (w >> 2), y0 + (h >> 2), w >> 1, t, ink); break;  // short bar
      }
    }
  };

  let y = 20;
  let line = 0;
  while (true) {
    const h = line === 0 ? 40 : randInt(rng, 14, 30);  // a title line, then body text
    if (y + h > size - 16) break;
    const shade = randInt(rng, 10, 70);
    const ink = [shade, shade + randInt(rng, 0, 15), shade + randInt(rng, 0, 30)];
    const margin = randInt(rng, 16, 60);
    const right = line % 5 === 4 ? randInt(rng, size / 3, size - 60) : size - randInt(rng, 16, 40);  // paragraph ends
    let x = margin;
    while (true) {
      const letters = randInt(rng, 2, 9);
      const gw = Math.round(h * (0.55 + 0.3 * rng()));
      const wordWidth = letters * gw + (letters - 1) * Math.round(0.15 * h);
      if (x + wordWidth > right) break;
      for (let g = 0; g < letters; ++g) drawGlyph(x + g * (gw + Math.round(0.15 * h)), y, gw, h, ink);
      x += wordWidth + Math.round(h * (0.5 + 0.4 * rng()));
    }
    y += Math.round(h * (1.5 + 0.5 * rng()));
    ++line;
  }

  const plane = size * size;
  const data = new Float32Array(3 * plane);
  for (let i = 0; i < plane; ++i) {
    for (let c = 0; c < 3; ++c) data[c * plane + i] = Math.fround((rgb[3 * i + c] / 255 - 0.5) / 0.5);
  }
  return { type: 'float32', dims: [1, 3, size, size], data };
}

// Chunk `step` of a continuous 16 kHz test signal (voiced-like harmonics with a per-chunk loudness, plus
// noise), as Silero VAD's `input` [1, samples], values in [-1, 1].
export function makeSileroChunk(step, samples = 512, seed = 7) {
  const loudness = [0.0, 0.6, 0.8, 0.3, 0.9, 0.05, 0.7, 0.5];
  const rng = makeRng(seed + 1000 * step);
  const amplitude = loudness[step % loudness.length];
  const data = new Float32Array(samples);
  for (let i = 0; i < samples; ++i) {
    const t = (step * samples + i) / 16000;
    const pitch = 140 + 30 * Math.sin(2 * Math.PI * 3 * t);  // slow vibrato
    let v = 0.5 * Math.sin(2 * Math.PI * pitch * t) + 0.3 * Math.sin(2 * Math.PI * 2 * pitch * t + 0.3) +
            0.15 * Math.sin(2 * Math.PI * 5 * pitch * t + 1.1);
    v = amplitude * v + 0.02 * (2 * rng() - 1);
    data[i] = Math.fround(Math.max(-1, Math.min(1, v)));
  }
  return { type: 'float32', dims: [1, samples], data };
}
