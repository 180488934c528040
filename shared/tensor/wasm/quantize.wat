;; Block quantization for ZeRO++ (training/quantized.ts): symmetric, a scale per block of $block values.
;;   quantize     codes[i] = round_even(x[i] / s_b) as int8, s_b = max|x| over block b / $qmax (127 for int8,
;;                7 for int4); a block of zeros gets s_b = 0 and codes 0 (0/0 is NaN, which trunc_sat makes 0)
;;   dequantize   y[i] = f32(codes[i]) * s_b
;;   pack_int4    two codes a byte, the even one in the low nibble; unpack_int4 the reverse, sign-extended
;; $block is a positive multiple of 16, so every block but the last starts and ends on a vector; a block's
;; tail that is not a multiple of 4 (16 for the int4 packing) is done one element at a time, with the same
;; IEEE arithmetic, so every result is bit for bit what torch computes (test/helpers/torch_quant.py).
(module
  (memory (import "e" "m") 1)

  ;; max |x[i]| for i < n, x at byte offset $p
  (func $absmax (param $p i32) (param $n i32) (result f32)
    (local $m v128) (local $i i32) (local $lim i32) (local $a f32)
    (local.set $lim (i32.and (local.get $n) (i32.const -4)))
    (block $e (loop $l
      (br_if $e (i32.ge_u (local.get $i) (local.get $lim)))
      (local.set $m (f32x4.max (local.get $m) (f32x4.abs (v128.load (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 2)))))))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br $l)))
    (local.set $a (f32.max (f32.max (f32x4.extract_lane 0 (local.get $m)) (f32x4.extract_lane 1 (local.get $m)))
                           (f32.max (f32x4.extract_lane 2 (local.get $m)) (f32x4.extract_lane 3 (local.get $m)))))
    (block $e (loop $l
      (br_if $e (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $a (f32.max (local.get $a) (f32.abs (f32.load (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 2)))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (local.get $a))

  (func (export "quantize") (param $x i32) (param $n i32) (param $block i32) (param $qmax f32) (param $q i32) (param $s i32)
    (local $b0 i32) (local $len i32) (local $i i32) (local $lim i32) (local $scale f32) (local $vs v128) (local $p i32) (local $c v128)
    (block $done (loop $blocks
      (br_if $done (i32.ge_u (local.get $b0) (local.get $n)))
      (local.set $len (i32.sub (local.get $n) (local.get $b0)))
      (if (i32.gt_u (local.get $len) (local.get $block)) (then (local.set $len (local.get $block))))
      (local.set $p (i32.add (local.get $x) (i32.shl (local.get $b0) (i32.const 2))))
      (local.set $scale (f32.div (call $absmax (local.get $p) (local.get $len)) (local.get $qmax)))
      (f32.store (local.get $s) (local.get $scale))
      (local.set $vs (f32x4.splat (local.get $scale)))
      (local.set $lim (i32.and (local.get $len) (i32.const -4)))
      (local.set $i (i32.const 0))
      (block $e (loop $l
        (br_if $e (i32.ge_u (local.get $i) (local.get $lim)))
        (local.set $c (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.div (v128.load (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 2)))) (local.get $vs)))))
        (local.set $c (i16x8.narrow_i32x4_s (local.get $c) (local.get $c)))
        (v128.store32_lane 0 (i32.add (local.get $q) (i32.add (local.get $b0) (local.get $i))) (i8x16.narrow_i16x8_s (local.get $c) (local.get $c)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l)))
      (block $e (loop $l
        (br_if $e (i32.ge_u (local.get $i) (local.get $len)))
        (i32.store8 (i32.add (local.get $q) (i32.add (local.get $b0) (local.get $i)))
          (i32.trunc_sat_f32_s (f32.nearest (f32.div (f32.load (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 2)))) (local.get $scale)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
      (local.set $s (i32.add (local.get $s) (i32.const 4)))
      (local.set $b0 (i32.add (local.get $b0) (local.get $block)))
      (br $blocks))))

  (func (export "dequantize") (param $q i32) (param $s i32) (param $n i32) (param $block i32) (param $y i32)
    (local $b0 i32) (local $len i32) (local $i i32) (local $lim i32) (local $scale f32) (local $vs v128) (local $at i32)
    (block $done (loop $blocks
      (br_if $done (i32.ge_u (local.get $b0) (local.get $n)))
      (local.set $len (i32.sub (local.get $n) (local.get $b0)))
      (if (i32.gt_u (local.get $len) (local.get $block)) (then (local.set $len (local.get $block))))
      (local.set $scale (f32.load (local.get $s)))
      (local.set $vs (f32x4.splat (local.get $scale)))
      (local.set $lim (i32.and (local.get $len) (i32.const -4)))
      (local.set $i (i32.const 0))
      (block $e (loop $l
        (br_if $e (i32.ge_u (local.get $i) (local.get $lim)))
        (local.set $at (i32.add (local.get $b0) (local.get $i)))
        (v128.store (i32.add (local.get $y) (i32.shl (local.get $at) (i32.const 2)))
          (f32x4.mul (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (i16x8.extend_low_i8x16_s (v128.load32_zero (i32.add (local.get $q) (local.get $at))))))
                     (local.get $vs)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l)))
      (block $e (loop $l
        (br_if $e (i32.ge_u (local.get $i) (local.get $len)))
        (local.set $at (i32.add (local.get $b0) (local.get $i)))
        (f32.store (i32.add (local.get $y) (i32.shl (local.get $at) (i32.const 2)))
          (f32.mul (f32.convert_i32_s (i32.load8_s (i32.add (local.get $q) (local.get $at)))) (local.get $scale)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
      (local.set $s (i32.add (local.get $s) (i32.const 4)))
      (local.set $b0 (i32.add (local.get $b0) (local.get $block)))
      (br $blocks))))

  ;; out[j] = (codes[2j] & 15) | (codes[2j+1] << 4); an odd n leaves the last byte's high nibble 0
  (func (export "pack_int4") (param $c i32) (param $n i32) (param $out i32)
    (local $i i32) (local $lim i32) (local $v v128) (local $lo i32) (local $hi i32)
    (local.set $lim (i32.and (local.get $n) (i32.const -16)))
    (block $e (loop $l
      (br_if $e (i32.ge_u (local.get $i) (local.get $lim)))
      (local.set $v (v128.load (i32.add (local.get $c) (local.get $i))))
      (v128.store64_lane 0 (i32.add (local.get $out) (i32.shr_u (local.get $i) (i32.const 1)))
        (v128.or
          (v128.and (i8x16.shuffle 0 2 4 6 8 10 12 14 0 2 4 6 8 10 12 14 (local.get $v) (local.get $v)) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15))
          (i8x16.shl (i8x16.shuffle 1 3 5 7 9 11 13 15 1 3 5 7 9 11 13 15 (local.get $v) (local.get $v)) (i32.const 4))))
      (local.set $i (i32.add (local.get $i) (i32.const 16)))
      (br $l)))
    (block $e (loop $l
      (br_if $e (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $lo (i32.and (i32.load8_u (i32.add (local.get $c) (local.get $i))) (i32.const 15)))
      (local.set $hi (i32.const 0))
      (if (i32.lt_u (i32.add (local.get $i) (i32.const 1)) (local.get $n))
        (then (local.set $hi (i32.shl (i32.and (i32.load8_u (i32.add (local.get $c) (i32.add (local.get $i) (i32.const 1)))) (i32.const 15)) (i32.const 4)))))
      (i32.store8 (i32.add (local.get $out) (i32.shr_u (local.get $i) (i32.const 1))) (i32.or (local.get $lo) (local.get $hi)))
      (local.set $i (i32.add (local.get $i) (i32.const 2)))
      (br $l))))

  ;; codes[2j] = low nibble of in[j], codes[2j+1] = its high nibble, each sign-extended from 4 bits
  (func (export "unpack_int4") (param $in i32) (param $n i32) (param $c i32)
    (local $i i32) (local $lim i32) (local $v v128) (local $b i32)
    (local.set $lim (i32.and (local.get $n) (i32.const -16)))
    (block $e (loop $l
      (br_if $e (i32.ge_u (local.get $i) (local.get $lim)))
      (local.set $v (v128.load64_zero (i32.add (local.get $in) (i32.shr_u (local.get $i) (i32.const 1)))))
      (v128.store (i32.add (local.get $c) (local.get $i))
        (i8x16.shuffle 0 16 1 17 2 18 3 19 4 20 5 21 6 22 7 23
          (i8x16.shr_s (i8x16.shl (local.get $v) (i32.const 4)) (i32.const 4))
          (i8x16.shr_s (local.get $v) (i32.const 4))))
      (local.set $i (i32.add (local.get $i) (i32.const 16)))
      (br $l)))
    (block $e (loop $l
      (br_if $e (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $b (i32.load8_u (i32.add (local.get $in) (i32.shr_u (local.get $i) (i32.const 1)))))
      (i32.store8 (i32.add (local.get $c) (local.get $i)) (i32.shr_s (i32.shl (local.get $b) (i32.const 28)) (i32.const 28)))
      (if (i32.lt_u (i32.add (local.get $i) (i32.const 1)) (local.get $n))
        (then (i32.store8 (i32.add (local.get $c) (i32.add (local.get $i) (i32.const 1))) (i32.shr_s (i32.shl (local.get $b) (i32.const 24)) (i32.const 28)))))
      (local.set $i (i32.add (local.get $i) (i32.const 2)))
      (br $l))))
;; the working copy's bf16 bits <-> fp32 around the quantization, and what it lost, all in this memory
  ;; y[i] = fp32 of bf16 bits x[i]
  (func (export "widen") (param $x i32) (param $n i32) (param $y i32)
    (local $i i32) (local $lim i32) (local $v v128)
    (local.set $lim (i32.and (local.get $n) (i32.const -8)))
    (block $e (loop $l
      (br_if $e (i32.ge_u (local.get $i) (local.get $lim)))
      (local.set $v (v128.load (i32.add (local.get $x) (i32.shl (local.get $i) (i32.const 1)))))
      (v128.store (i32.add (local.get $y) (i32.shl (local.get $i) (i32.const 2))) (i32x4.shl (i32x4.extend_low_i16x8_u (local.get $v)) (i32.const 16)))
      (v128.store offset=16 (i32.add (local.get $y) (i32.shl (local.get $i) (i32.const 2))) (i32x4.shl (i32x4.extend_high_i16x8_u (local.get $v)) (i32.const 16)))
      (local.set $i (i32.add (local.get $i) (i32.const 8)))
      (br $l)))
    (block $e (loop $l
      (br_if $e (i32.ge_u (local.get $i) (local.get $n)))
      (i32.store (i32.add (local.get $y) (i32.shl (local.get $i) (i32.const 2))) (i32.shl (i32.load16_u (i32.add (local.get $x) (i32.shl (local.get $i) (i32.const 1)))) (i32.const 16)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l))))

  ;; y[i] = x[i] rounded to bf16 bits, to nearest even (finite values: what the working copy holds)
  (func (export "narrow") (param $x i32) (param $n i32) (param $y i32)
    (local $i i32) (local $lim i32) (local $a v128) (local $b v128) (local $w i32)
    (local.set $lim (i32.and (local.get $n) (i32.const -8)))
    (block $e (loop $l
      (br_if $e (i32.ge_u (local.get $i) (local.get $lim)))
      (local.set $a (v128.load (i32.add (local.get $x) (i32.shl (local.get $i) (i32.const 2)))))
      (local.set $b (v128.load offset=16 (i32.add (local.get $x) (i32.shl (local.get $i) (i32.const 2)))))
      (local.set $a (i32x4.shr_u (i32x4.add (local.get $a) (i32x4.add (i32x4.splat (i32.const 0x7fff)) (v128.and (i32x4.shr_u (local.get $a) (i32.const 16)) (i32x4.splat (i32.const 1))))) (i32.const 16)))
      (local.set $b (i32x4.shr_u (i32x4.add (local.get $b) (i32x4.add (i32x4.splat (i32.const 0x7fff)) (v128.and (i32x4.shr_u (local.get $b) (i32.const 16)) (i32x4.splat (i32.const 1))))) (i32.const 16)))
      (v128.store (i32.add (local.get $y) (i32.shl (local.get $i) (i32.const 1))) (i16x8.narrow_i32x4_u (local.get $a) (local.get $b)))
      (local.set $i (i32.add (local.get $i) (i32.const 8)))
      (br $l)))
    (block $e (loop $l
      (br_if $e (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $w (i32.load (i32.add (local.get $x) (i32.shl (local.get $i) (i32.const 2)))))
      (i32.store16 (i32.add (local.get $y) (i32.shl (local.get $i) (i32.const 1)))
        (i32.shr_u (i32.add (local.get $w) (i32.add (i32.const 0x7fff) (i32.and (i32.shr_u (local.get $w) (i32.const 16)) (i32.const 1)))) (i32.const 16)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l))))

  ;; what quantizing x (n values, codes and scales as quantize wrote them) lost: out[0] += sum |q - x|,
  ;; out[1] += sum |x|, out[2] = max(out[2], max |q - x|), out[3] = max(out[3], max |x|); int8 codes, one a byte
  (func (export "quant_error") (param $x i32) (param $q i32) (param $s i32) (param $n i32) (param $block i32) (param $out i32)
    (local $b0 i32) (local $len i32) (local $i i32) (local $lim i32) (local $vs v128) (local $v v128) (local $e v128) (local $at i32)
    (local $se v128) (local $sa v128) (local $me v128) (local $ma v128) (local $xe f32) (local $xs f32) (local $ee f32)
    (block $done (loop $blocks
      (br_if $done (i32.ge_u (local.get $b0) (local.get $n)))
      (local.set $len (i32.sub (local.get $n) (local.get $b0)))
      (if (i32.gt_u (local.get $len) (local.get $block)) (then (local.set $len (local.get $block))))
      (local.set $vs (f32x4.splat (f32.load (local.get $s))))
      (local.set $lim (i32.and (local.get $len) (i32.const -4)))
      (local.set $i (i32.const 0))
      (block $e (loop $l
        (br_if $e (i32.ge_u (local.get $i) (local.get $lim)))
        (local.set $at (i32.add (local.get $b0) (local.get $i)))
        (local.set $v (v128.load (i32.add (local.get $x) (i32.shl (local.get $at) (i32.const 2)))))
        (local.set $e (f32x4.abs (f32x4.sub (f32x4.mul (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (i16x8.extend_low_i8x16_s (v128.load32_zero (i32.add (local.get $q) (local.get $at)))))) (local.get $vs)) (local.get $v))))
        (local.set $se (f32x4.add (local.get $se) (local.get $e)))
        (local.set $me (f32x4.max (local.get $me) (local.get $e)))
        (local.set $sa (f32x4.add (local.get $sa) (f32x4.abs (local.get $v))))
        (local.set $ma (f32x4.max (local.get $ma) (f32x4.abs (local.get $v))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l)))
      (block $e (loop $l
        (br_if $e (i32.ge_u (local.get $i) (local.get $len)))
        (local.set $at (i32.add (local.get $b0) (local.get $i)))
        (local.set $xs (f32.load (i32.add (local.get $x) (i32.shl (local.get $at) (i32.const 2)))))
        (local.set $ee (f32.abs (f32.sub (f32.mul (f32.convert_i32_s (i32.load8_s (i32.add (local.get $q) (local.get $at)))) (f32x4.extract_lane 0 (local.get $vs))) (local.get $xs))))
        (local.set $se (f32x4.replace_lane 0 (local.get $se) (f32.add (f32x4.extract_lane 0 (local.get $se)) (local.get $ee))))
        (local.set $me (f32x4.replace_lane 0 (local.get $me) (f32.max (f32x4.extract_lane 0 (local.get $me)) (local.get $ee))))
        (local.set $sa (f32x4.replace_lane 0 (local.get $sa) (f32.add (f32x4.extract_lane 0 (local.get $sa)) (f32.abs (local.get $xs)))))
        (local.set $ma (f32x4.replace_lane 0 (local.get $ma) (f32.max (f32x4.extract_lane 0 (local.get $ma)) (f32.abs (local.get $xs)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
      (local.set $s (i32.add (local.get $s) (i32.const 4)))
      (local.set $b0 (i32.add (local.get $b0) (local.get $block)))
      (br $blocks)))
    (f32.store offset=0 (local.get $out) (f32.add (f32.load offset=0 (local.get $out))
      (f32.add (f32.add (f32x4.extract_lane 0 (local.get $se)) (f32x4.extract_lane 1 (local.get $se))) (f32.add (f32x4.extract_lane 2 (local.get $se)) (f32x4.extract_lane 3 (local.get $se))))))
    (f32.store offset=4 (local.get $out) (f32.add (f32.load offset=4 (local.get $out))
      (f32.add (f32.add (f32x4.extract_lane 0 (local.get $sa)) (f32x4.extract_lane 1 (local.get $sa))) (f32.add (f32x4.extract_lane 2 (local.get $sa)) (f32x4.extract_lane 3 (local.get $sa))))))
    (f32.store offset=8 (local.get $out) (f32.max (f32.load offset=8 (local.get $out))
      (f32.max (f32.max (f32x4.extract_lane 0 (local.get $me)) (f32x4.extract_lane 1 (local.get $me))) (f32.max (f32x4.extract_lane 2 (local.get $me)) (f32x4.extract_lane 3 (local.get $me))))))
    (f32.store offset=12 (local.get $out) (f32.max (f32.load offset=12 (local.get $out))
      (f32.max (f32.max (f32x4.extract_lane 0 (local.get $ma)) (f32x4.extract_lane 1 (local.get $ma))) (f32.max (f32x4.extract_lane 2 (local.get $ma)) (f32x4.extract_lane 3 (local.get $ma)))))))
)
