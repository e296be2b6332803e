// Linear 8-bit quantization arithmetic shared by the int8 shaders, bit for bit what the CPU EP computes
// (engine/src/ep/cpu/kernels/quantization.h): saturate(round_half_even(v) + zero_point), NaN giving the zero point.
// 8-bit tensors are packed four elements to a 32-bit word, little-endian (the host's byte order), so they need no
// 8-bit storage feature: element i is byte i % 4 of word i / 4.
//
// Division: Vulkan allows OpFDiv an error of 2.5 ULP, so where the CPU divides (QuantizeLinear's x / y_scale,
// DynamicQuantizeLinear's scale), the shaders use the driver's quotient only where it provably rounds to the same
// integer and otherwise compute the correctly rounded quotient with integer long division (exactQuotient).

// Element `lane` (0-3) of a packed word, sign-extended when `isSigned` (int8), zero-extended otherwise (uint8).
int unpackQ(uint word, uint lane, bool isSigned) {
  int offset = int(lane * 8u);
  return isSigned ? bitfieldExtract(int(word), offset, 8) : int(bitfieldExtract(word, offset, 8));
}
// Element i of a packed 8-bit buffer.
#define LOAD_Q(buffer, i, isSigned) unpackQ(buffer[(i) >> 2u], (i) & 3u, isSigned)

// saturate(round_half_even(scaled) + zeroPoint) into the 8-bit range; NaN gives the zero point. The addition and the
// clamp run in float, as the CPU EP's saturateQuantize does.
int saturateRounded(float scaled, int zeroPoint, bool isSigned) {
  if (isnan(scaled)) return zeroPoint;
  float value = roundEven(scaled) + float(zeroPoint);
  float lo = isSigned ? -128.0 : 0.0, hi = isSigned ? 127.0 : 255.0;
  return int(value < lo ? lo : value > hi ? hi : value);
}

// The correctly rounded (IEEE-754, round to nearest even) float32 quotient a / b, with subnormals, zeros,
// infinities and NaN, from integer operations only (so no driver rounding or denormal flushing affects it).
float exactQuotient(float a, float b) {
  uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
  uint sign = (ua ^ ub) & 0x80000000u;
  uint ea = (ua >> 23) & 0xFFu, eb = (ub >> 23) & 0xFFu;
  uint fa = ua & 0x7FFFFFu, fb = ub & 0x7FFFFFu;
  bool aZero = ea == 0u && fa == 0u, bZero = eb == 0u && fb == 0u;
  if ((ea == 255u && fa != 0u) || (eb == 255u && fb != 0u) || (aZero && bZero) || (ea == 255u && eb == 255u)) {
    return uintBitsToFloat(0x7FC00000u);
  }
  if (ea == 255u || bZero) return uintBitsToFloat(sign | 0x7F800000u);
  if (aZero || eb == 255u) return uintBitsToFloat(sign);
  // Significands normalized to [2^23, 2^24) with their exponents.
  uint ma = ea == 0u ? fa : (fa | 0x800000u), mb = eb == 0u ? fb : (fb | 0x800000u);
  int expA = ea == 0u ? -126 : int(ea) - 127, expB = eb == 0u ? -126 : int(eb) - 127;
  int shiftA = 23 - findMSB(ma), shiftB = 23 - findMSB(mb);
  ma <<= uint(shiftA);
  mb <<= uint(shiftB);
  int e = (expA - shiftA) - (expB - shiftB);
  if (ma < mb) {
    ma <<= 1u;
    e -= 1;
  }
  // 27 quotient bits (ma / mb is in [1, 2)): q = floor(ma * 2^26 / mb), the remainder is the sticky bit.
  uint q = 1u, r = ma - mb;
  for (int k = 0; k < 26; ++k) {
    r <<= 1u;
    q <<= 1u;
    if (r >= mb) {
      r -= mb;
      q |= 1u;
    }
  }
  // The value is q * 2^(e - 26); keep 24 bits for a normal result, fewer for a subnormal one.
  int shift = 3 + (e < -126 ? -126 - e : 0);
  if (shift >= 28) return uintBitsToFloat(sign);  // below half the smallest subnormal
  uint m = q >> uint(shift), lost = q & ((1u << uint(shift)) - 1u), halfway = 1u << uint(shift - 1);
  if (lost > halfway || (lost == halfway && (r != 0u || (m & 1u) != 0u))) m += 1u;
  if (e < -126) return uintBitsToFloat(sign | m);  // m == 2^23 is the smallest normal number
  if (m == 0x1000000u) {
    m >>= 1u;
    e += 1;
  }
  if (e > 127) return uintBitsToFloat(sign | 0x7F800000u);
  return uintBitsToFloat(sign | (uint(e + 127) << 23) | (m & 0x7FFFFFu));
}

// saturate(round_half_even(a / b) + zeroPoint) with the quotient rounded to float32 first, as the CPU EP divides.
// The driver's quotient q (within 2.5 ULP where |b| is in [2^-126, 2^126] and a is normal or zero) decides alone
// when no half-integer lies within max(|q|, 1) * 2^-19 of it (at least 16 ULP of q, so q and the correctly rounded
// quotient round to the same integer) or when |q| >= 1024 saturates any 8-bit zero point; otherwise exactQuotient
// decides.
int quantizeDivided(float a, float b, int zeroPoint, bool isSigned) {
  uint ua = floatBitsToUint(a), ea = (ua >> 23) & 0xFFu, eb = (floatBitsToUint(b) >> 23) & 0xFFu;
  float q = a / b;
  bool fast = eb >= 1u && eb <= 253u && ea != 255u && (ea != 0u || (ua & 0x7FFFFFu) == 0u) && !isinf(q) && !isnan(q);
  if (fast && abs(q) < 1024.0) fast = abs(q - floor(q) - 0.5) > max(abs(q), 1.0) * (1.0 / 524288.0);
  return saturateRounded(fast ? q : exactQuotient(a, b), zeroPoint, isSigned);
}
