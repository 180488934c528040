;; The ring's arithmetic, on a received chunk in place: one hop of a reduce-scatter adds this rank's own
;; copy of the chunk into it. Pointers are byte offsets into the imported memory; $n counts elements.
;; Both kernels are unrolled four times: unrolled, the loop's own instructions no longer outnumber the
;; arithmetic (the add runs 1.8x faster on data in L1, 1.3x in L2).
(module
  (memory (import "e" "m") 1)

  ;; dst[i] += src[i], fp32, $n a multiple of 4.
  (func (export "add") (param $dst i32) (param $src i32) (param $n i32)
    (local $end i32)
    ;; 16 elements (64 bytes) per turn while that many remain
    (local.set $end (i32.add (local.get $dst) (i32.shl (i32.and (local.get $n) (i32.const -16)) (i32.const 2))))
    (block $done
      (loop $turn
        (br_if $done (i32.ge_u (local.get $dst) (local.get $end)))
        (v128.store offset=0 (local.get $dst) (f32x4.add (v128.load offset=0 (local.get $dst)) (v128.load offset=0 (local.get $src))))
        (v128.store offset=16 (local.get $dst) (f32x4.add (v128.load offset=16 (local.get $dst)) (v128.load offset=16 (local.get $src))))
        (v128.store offset=32 (local.get $dst) (f32x4.add (v128.load offset=32 (local.get $dst)) (v128.load offset=32 (local.get $src))))
        (v128.store offset=48 (local.get $dst) (f32x4.add (v128.load offset=48 (local.get $dst)) (v128.load offset=48 (local.get $src))))
        (local.set $dst (i32.add (local.get $dst) (i32.const 64)))
        (local.set $src (i32.add (local.get $src) (i32.const 64)))
        (br $turn)))
    ;; then 4 at a time
    (local.set $end (i32.add (local.get $dst) (i32.shl (i32.and (local.get $n) (i32.const 15)) (i32.const 2))))
    (block $done
      (loop $turn
        (br_if $done (i32.ge_u (local.get $dst) (local.get $end)))
        (v128.store (local.get $dst) (f32x4.add (v128.load (local.get $dst)) (v128.load (local.get $src))))
        (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
        (local.set $src (i32.add (local.get $src) (i32.const 16)))
        (br $turn))))

  ;; The bf16 bits of four fp32 lanes, rounded to nearest even; a NaN stays a quiet NaN (as bf16.ts):
  ;; NaN: (x >> 16) | 0x40, otherwise (x + 0x7fff + ((x >> 16) & 1)) >> 16, wrapping like the reference.
  ;; The constants come in splatted ($one = 1, $half = 0x7fff, $quiet = 0x40 in every lane): made once per
  ;; call of the kernel, not once per lane group.
  (func $round_bf16 (param $x v128) (param $one v128) (param $half v128) (param $quiet v128) (result v128)
    (local $hi v128)
    (local.set $hi (i32x4.shr_u (local.get $x) (i32.const 16)))
    (v128.bitselect
      (v128.or (local.get $hi) (local.get $quiet))
      (i32x4.shr_u
        (i32x4.add (i32x4.add (local.get $x) (v128.and (local.get $hi) (local.get $one))) (local.get $half))
        (i32.const 16))
      (f32x4.ne (local.get $x) (local.get $x))))

  ;; Four bf16 at $p as fp32 lanes (exact: a bf16 is the top half of an fp32).
  (func $widen_lo (param $p i32) (result v128)
    (i32x4.shl (v128.load16x4_u (local.get $p)) (i32.const 16)))

  ;; Eight lanes: dst = bf16(fp32(dst) + fp32(src)), the sum in fp32, rounded once.
  (func $add8_bf16 (param $dst i32) (param $src i32) (param $one v128) (param $half v128) (param $quiet v128)
    (v128.store (local.get $dst)
      (i16x8.narrow_i32x4_u
        (call $round_bf16
          (f32x4.add (call $widen_lo (local.get $dst)) (call $widen_lo (local.get $src)))
          (local.get $one) (local.get $half) (local.get $quiet))
        (call $round_bf16
          (f32x4.add
            (call $widen_lo (i32.add (local.get $dst) (i32.const 8)))
            (call $widen_lo (i32.add (local.get $src) (i32.const 8))))
          (local.get $one) (local.get $half) (local.get $quiet)))))

  ;; dst[i] = bf16(fp32(dst[i]) + fp32(src[i])) for bf16 bits, $n a multiple of 8: one hop of a bf16
  ;; reduce-scatter in one pass, with no fp32 accumulator in memory.
  (func (export "addBf16") (param $dst i32) (param $src i32) (param $n i32)
    (local $end i32) (local $one v128) (local $half v128) (local $quiet v128)
    (local.set $one (i32x4.splat (i32.const 1)))
    (local.set $half (i32x4.splat (i32.const 0x7fff)))
    (local.set $quiet (i32x4.splat (i32.const 0x40)))
    ;; 32 elements (64 bytes) per turn while that many remain
    (local.set $end (i32.add (local.get $dst) (i32.shl (i32.and (local.get $n) (i32.const -32)) (i32.const 1))))
    (block $done
      (loop $turn
        (br_if $done (i32.ge_u (local.get $dst) (local.get $end)))
        (call $add8_bf16 (local.get $dst) (local.get $src) (local.get $one) (local.get $half) (local.get $quiet))
        (call $add8_bf16 (i32.add (local.get $dst) (i32.const 16)) (i32.add (local.get $src) (i32.const 16)) (local.get $one) (local.get $half) (local.get $quiet))
        (call $add8_bf16 (i32.add (local.get $dst) (i32.const 32)) (i32.add (local.get $src) (i32.const 32)) (local.get $one) (local.get $half) (local.get $quiet))
        (call $add8_bf16 (i32.add (local.get $dst) (i32.const 48)) (i32.add (local.get $src) (i32.const 48)) (local.get $one) (local.get $half) (local.get $quiet))
        (local.set $dst (i32.add (local.get $dst) (i32.const 64)))
        (local.set $src (i32.add (local.get $src) (i32.const 64)))
        (br $turn)))
    ;; then 8 at a time
    (local.set $end (i32.add (local.get $dst) (i32.shl (i32.and (local.get $n) (i32.const 31)) (i32.const 1))))
    (block $done
      (loop $turn
        (br_if $done (i32.ge_u (local.get $dst) (local.get $end)))
        (call $add8_bf16 (local.get $dst) (local.get $src) (local.get $one) (local.get $half) (local.get $quiet))
        (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
        (local.set $src (i32.add (local.get $src) (i32.const 16)))
        (br $turn))))
)
