;; The models' work that is not a product, four lanes at a time, on the kernel arena (training/activations.ts
;; calls them, and does in JavaScript what they do not take: a remainder, a width not a multiple of 4).
;;   gelu            out = x·Φ(x) = ½·x·(1 + erf(x/√2)), exact as torch.nn.functional.gelu; $n a multiple of 4
;;   gelu_backward   g *= Φ(x) + x·φ(x), Φ(x) read back from the forward's output as act/x (near 0: ½ + x·φ(0))
;;   layer_norm, layer_norm_backward   over rows of $D (a multiple of 4) elements, as ops.ts: stats keep each
;;                   row's mean and 1/sqrt(var + 1e-5); the backward accumulates dw, db and adds into dx
;;   causal_softmax, causal_softmax_backward   the attention's P = softmax(S·scale) over u <= t in each row of
;;                   a T x T block (zero beyond), and dS = P·(dP - Σ P·dP)·scale, as gpt-attention.ts did
;; erf is Numerical Recipes' Chebyshev fit of erfc (|relative error| < 1.2e-7), as ops.ts computes it in
;; JavaScript; e^x is Cephes' expf (x = k·ln2 + r, a polynomial in r, 2^k put into the exponent bits). In fp32
;; throughout, so the results differ from ops.ts's (double precision, rounded once) in the last bits.
(module
  (memory (import "e" "m") 1)

  ;; e^x, four lanes; relative error ~1e-7 on [-87.3, 88.3] (clamped there: e^-87.3 is near fp32's least normal).
  (func $exp4 (param $x v128) (result v128)
    (local $k v128) (local $r v128)
    (local.set $x (f32x4.min (f32x4.max (local.get $x) (v128.const f32x4 -87.3 -87.3 -87.3 -87.3)) (v128.const f32x4 88.3 88.3 88.3 88.3)))
    (local.set $k (f32x4.nearest (f32x4.mul (local.get $x) (v128.const f32x4 1.44269504 1.44269504 1.44269504 1.44269504))))
    ;; r = x - k·ln2, ln2 in two parts so that k·ln2_hi is exact
    (local.set $r (f32x4.sub (f32x4.sub (local.get $x) (f32x4.mul (local.get $k) (v128.const f32x4 0.693359375 0.693359375 0.693359375 0.693359375)))
      (f32x4.mul (local.get $k) (v128.const f32x4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4))))
    ;; e^r = 1 + r + r²·p(r), times 2^k: (k + 127) << 23 is 2^k's fp32 bits
    (f32x4.mul
      (f32x4.add (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (v128.const f32x4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4) (local.get $r)) (v128.const f32x4 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3)) (local.get $r)) (v128.const f32x4 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3)) (local.get $r)) (v128.const f32x4 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2)) (local.get $r)) (v128.const f32x4 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1)) (local.get $r)) (v128.const f32x4 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1)) (f32x4.mul (local.get $r) (local.get $r))) (local.get $r)) (v128.const f32x4 1 1 1 1))
      (i32x4.shl (i32x4.add (i32x4.trunc_sat_f32x4_s (local.get $k)) (v128.const i32x4 127 127 127 127)) (i32.const 23))))

  ;; erfc(z) for z = |x|/√2 ≥ 0, as t·e^(-z² + P(t)), t = 1/(1 + z/2).
  (func $erfc4 (param $z v128) (result v128)
    (local $t v128)
    (local.set $t (f32x4.div (v128.const f32x4 1 1 1 1) (f32x4.add (v128.const f32x4 1 1 1 1) (f32x4.mul (v128.const f32x4 0.5 0.5 0.5 0.5) (local.get $z)))))
    (f32x4.mul (local.get $t)
      (call $exp4 (f32x4.add (f32x4.neg (f32x4.mul (local.get $z) (local.get $z))) (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (f32x4.add (f32x4.mul (v128.const f32x4 0.17087277 0.17087277 0.17087277 0.17087277) (local.get $t)) (v128.const f32x4 -0.82215223 -0.82215223 -0.82215223 -0.82215223)) (local.get $t)) (v128.const f32x4 1.48851587 1.48851587 1.48851587 1.48851587)) (local.get $t)) (v128.const f32x4 -1.13520398 -1.13520398 -1.13520398 -1.13520398)) (local.get $t)) (v128.const f32x4 0.27886807 0.27886807 0.27886807 0.27886807)) (local.get $t)) (v128.const f32x4 -0.18628806 -0.18628806 -0.18628806 -0.18628806)) (local.get $t)) (v128.const f32x4 0.09678418 0.09678418 0.09678418 0.09678418)) (local.get $t)) (v128.const f32x4 0.37409196 0.37409196 0.37409196 0.37409196)) (local.get $t)) (v128.const f32x4 1.00002368 1.00002368 1.00002368 1.00002368)) (local.get $t)) (v128.const f32x4 -1.26551223 -1.26551223 -1.26551223 -1.26551223))))))

  (func (export "gelu") (param $x i32) (param $out i32) (param $n i32)
    (local $end i32) (local $v v128) (local $h v128)
    (local.set $end (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (block $done (loop $turn
      (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
      (local.set $v (v128.load align=4 (local.get $x)))
      ;; ½·x·erfc(|x|/√2): x·Φ(x) for x < 0, and x minus it for x ≥ 0 (Φ(x) = 1 - Φ(-x))
      (local.set $h (f32x4.mul (f32x4.mul (v128.const f32x4 0.5 0.5 0.5 0.5) (local.get $v))
        (call $erfc4 (f32x4.mul (f32x4.abs (local.get $v)) (v128.const f32x4 0.70710678118654752 0.70710678118654752 0.70710678118654752 0.70710678118654752)))))
      (v128.store align=4 (local.get $out)
        (v128.bitselect (local.get $h) (f32x4.sub (local.get $v) (local.get $h)) (f32x4.lt (local.get $v) (v128.const f32x4 0 0 0 0))))
      (local.set $x (i32.add (local.get $x) (i32.const 16)))
      (local.set $out (i32.add (local.get $out) (i32.const 16)))
      (br $turn))))

  (func (export "gelu_backward") (param $x i32) (param $act i32) (param $g i32) (param $n i32)
    (local $end i32) (local $v v128) (local $phi v128) (local $Phi v128)
    (local.set $end (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (block $done (loop $turn
      (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
      (local.set $v (v128.load align=4 (local.get $x)))
      (local.set $phi (f32x4.mul (v128.const f32x4 0.3989422804014327 0.3989422804014327 0.3989422804014327 0.3989422804014327) (call $exp4 (f32x4.mul (v128.const f32x4 -0.5 -0.5 -0.5 -0.5) (f32x4.mul (local.get $v) (local.get $v))))))
      ;; Φ = act/x away from 0; ½ + x·φ(0) within 1e-3 of it (the division's digits are gone there)
      (local.set $Phi (v128.bitselect
        (f32x4.div (v128.load align=4 (local.get $act)) (local.get $v))
        (f32x4.add (v128.const f32x4 0.5 0.5 0.5 0.5) (f32x4.mul (local.get $v) (v128.const f32x4 0.3989422804014327 0.3989422804014327 0.3989422804014327 0.3989422804014327)))
        (f32x4.gt (f32x4.abs (local.get $v)) (v128.const f32x4 1e-3 1e-3 1e-3 1e-3))))
      (v128.store align=4 (local.get $g)
        (f32x4.mul (v128.load align=4 (local.get $g)) (f32x4.add (local.get $Phi) (f32x4.mul (local.get $v) (local.get $phi)))))
      (local.set $x (i32.add (local.get $x) (i32.const 16)))
      (local.set $act (i32.add (local.get $act) (i32.const 16)))
      (local.set $g (i32.add (local.get $g) (i32.const 16)))
      (br $turn))))
  ;; The sum of four lanes.
  (func $hsum (param $v v128) (result f32)
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $v)) (f32x4.extract_lane 1 (local.get $v)))
      (f32.add (f32x4.extract_lane 2 (local.get $v)) (f32x4.extract_lane 3 (local.get $v)))))

  (func (export "layer_norm") (param $x i32) (param $w i32) (param $b i32) (param $out i32) (param $stats i32) (param $N i32) (param $D i32)
    (local $n i32) (local $i i32) (local $row i32) (local $acc v128) (local $d v128) (local $mean v128) (local $rstd v128) (local $m f32) (local $r f32) (local $bytes i32)
    (local.set $bytes (i32.shl (local.get $D) (i32.const 2)))
    (block $rows_done (loop $row_loop
      (br_if $rows_done (i32.ge_u (local.get $n) (local.get $N)))
      (local.set $row (i32.add (local.get $x) (i32.mul (local.get $n) (local.get $bytes))))
      ;; mean
      (local.set $acc (v128.const f32x4 0 0 0 0))
      (local.set $i (i32.const 0))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $i) (local.get $bytes)))
        (local.set $acc (f32x4.add (local.get $acc) (v128.load align=4 (i32.add (local.get $row) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l1)))
      (local.set $m (f32.div (call $hsum (local.get $acc)) (f32.convert_i32_u (local.get $D))))
      (local.set $mean (f32x4.splat (local.get $m)))
      ;; variance, about the mean
      (local.set $acc (v128.const f32x4 0 0 0 0))
      (local.set $i (i32.const 0))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $i) (local.get $bytes)))
        (local.set $d (f32x4.sub (v128.load align=4 (i32.add (local.get $row) (local.get $i))) (local.get $mean)))
        (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul (local.get $d) (local.get $d))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l2)))
      (local.set $r (f32.div (f32.const 1) (f32.sqrt (f32.add (f32.div (call $hsum (local.get $acc)) (f32.convert_i32_u (local.get $D))) (f32.const 1e-5)))))
      (local.set $rstd (f32x4.splat (local.get $r)))
      (f32.store (i32.add (local.get $stats) (i32.shl (local.get $n) (i32.const 3))) (local.get $m))
      (f32.store offset=4 (i32.add (local.get $stats) (i32.shl (local.get $n) (i32.const 3))) (local.get $r))
      ;; out = (x - mean)·rstd·w + b
      (local.set $i (i32.const 0))
      (block $d3 (loop $l3
        (br_if $d3 (i32.ge_u (local.get $i) (local.get $bytes)))
        (v128.store align=4 (i32.add (i32.add (local.get $out) (i32.mul (local.get $n) (local.get $bytes))) (local.get $i))
          (f32x4.add
            (f32x4.mul (f32x4.mul (f32x4.sub (v128.load align=4 (i32.add (local.get $row) (local.get $i))) (local.get $mean)) (local.get $rstd))
              (v128.load align=4 (i32.add (local.get $w) (local.get $i))))
            (v128.load align=4 (i32.add (local.get $b) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l3)))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $row_loop))))

  (func (export "layer_norm_backward") (param $x i32) (param $w i32) (param $stats i32) (param $dy i32) (param $dw i32) (param $db i32) (param $dx i32) (param $N i32) (param $D i32)
    (local $n i32) (local $i i32) (local $o i32) (local $bytes i32) (local $mean v128) (local $rstd v128)
    (local $xhat v128) (local $dyv v128) (local $g v128) (local $accG v128) (local $accGX v128) (local $sG v128) (local $sGX v128) (local $Df f32)
    (local.set $bytes (i32.shl (local.get $D) (i32.const 2)))
    (local.set $Df (f32.convert_i32_u (local.get $D)))
    (block $rows_done (loop $row_loop
      (br_if $rows_done (i32.ge_u (local.get $n) (local.get $N)))
      (local.set $o (i32.mul (local.get $n) (local.get $bytes)))
      (local.set $mean (f32x4.splat (f32.load (i32.add (local.get $stats) (i32.shl (local.get $n) (i32.const 3))))))
      (local.set $rstd (f32x4.splat (f32.load offset=4 (i32.add (local.get $stats) (i32.shl (local.get $n) (i32.const 3))))))
      (local.set $accG (v128.const f32x4 0 0 0 0))
      (local.set $accGX (v128.const f32x4 0 0 0 0))
      (local.set $i (i32.const 0))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $i) (local.get $bytes)))
        (local.set $xhat (f32x4.mul (f32x4.sub (v128.load align=4 (i32.add (i32.add (local.get $x) (local.get $o)) (local.get $i))) (local.get $mean)) (local.get $rstd)))
        (local.set $dyv (v128.load align=4 (i32.add (i32.add (local.get $dy) (local.get $o)) (local.get $i))))
        (local.set $g (f32x4.mul (local.get $dyv) (v128.load align=4 (i32.add (local.get $w) (local.get $i)))))
        (v128.store align=4 (i32.add (local.get $dw) (local.get $i))
          (f32x4.add (v128.load align=4 (i32.add (local.get $dw) (local.get $i))) (f32x4.mul (local.get $dyv) (local.get $xhat))))
        (v128.store align=4 (i32.add (local.get $db) (local.get $i))
          (f32x4.add (v128.load align=4 (i32.add (local.get $db) (local.get $i))) (local.get $dyv)))
        (local.set $accG (f32x4.add (local.get $accG) (local.get $g)))
        (local.set $accGX (f32x4.add (local.get $accGX) (f32x4.mul (local.get $g) (local.get $xhat))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l1)))
      (local.set $sG (f32x4.splat (f32.div (call $hsum (local.get $accG)) (local.get $Df))))
      (local.set $sGX (f32x4.splat (f32.div (call $hsum (local.get $accGX)) (local.get $Df))))
      (local.set $i (i32.const 0))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $i) (local.get $bytes)))
        (local.set $xhat (f32x4.mul (f32x4.sub (v128.load align=4 (i32.add (i32.add (local.get $x) (local.get $o)) (local.get $i))) (local.get $mean)) (local.get $rstd)))
        (local.set $g (f32x4.mul (v128.load align=4 (i32.add (i32.add (local.get $dy) (local.get $o)) (local.get $i))) (v128.load align=4 (i32.add (local.get $w) (local.get $i)))))
        (v128.store align=4 (i32.add (i32.add (local.get $dx) (local.get $o)) (local.get $i))
          (f32x4.add (v128.load align=4 (i32.add (i32.add (local.get $dx) (local.get $o)) (local.get $i)))
            (f32x4.mul (local.get $rstd) (f32x4.sub (f32x4.sub (local.get $g) (local.get $sG)) (f32x4.mul (local.get $xhat) (local.get $sGX))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l2)))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $row_loop))))

  ;; $n zeros from $at (no bulk memory: the modules are built for SIMD alone).
  (func $zero (param $at i32) (param $n i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $at) (i32.shl (local.get $n) (i32.const 2))))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
      (f32.store (local.get $at) (f32.const 0))
      (local.set $at (i32.add (local.get $at) (i32.const 4)))
      (br $l))))

  ;; e^x of one value (lane 0 of the four-lane version): for the last elements of a row.
  (func $exp1 (param $x f32) (result f32)
    (f32x4.extract_lane 0 (call $exp4 (f32x4.splat (local.get $x)))))

  (func (export "causal_softmax") (param $p i32) (param $T i32) (param $scale f32)
    (local $t i32) (local $row i32) (local $len i32) (local $end4 i32) (local $end i32) (local $i i32)
    (local $vmax v128) (local $m f32) (local $acc v128) (local $sum f32) (local $e v128) (local $ef f32) (local $sc v128)
    (local.set $sc (f32x4.splat (local.get $scale)))
    (block $rows_done (loop $rows
      (br_if $rows_done (i32.ge_u (local.get $t) (local.get $T)))
      (local.set $row (i32.add (local.get $p) (i32.shl (i32.mul (local.get $t) (local.get $T)) (i32.const 2))))
      (local.set $len (i32.add (local.get $t) (i32.const 1)))
      (local.set $end4 (i32.add (local.get $row) (i32.shl (i32.and (local.get $len) (i32.const -4)) (i32.const 2))))
      (local.set $end (i32.add (local.get $row) (i32.shl (local.get $len) (i32.const 2))))
      ;; the row's largest scaled score
      (local.set $vmax (v128.const f32x4 -inf -inf -inf -inf))
      (local.set $i (local.get $row))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $i) (local.get $end4)))
        (local.set $vmax (f32x4.max (local.get $vmax) (f32x4.mul (v128.load align=4 (local.get $i)) (local.get $sc))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l1)))
      (local.set $m (f32.max (f32.max (f32x4.extract_lane 0 (local.get $vmax)) (f32x4.extract_lane 1 (local.get $vmax)))
                             (f32.max (f32x4.extract_lane 2 (local.get $vmax)) (f32x4.extract_lane 3 (local.get $vmax)))))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $m (f32.max (local.get $m) (f32.mul (f32.load (local.get $i)) (local.get $scale))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l2)))
      ;; e^(s·scale - max), and their sum
      (local.set $acc (v128.const f32x4 0 0 0 0))
      (local.set $i (local.get $row))
      (block $d3 (loop $l3
        (br_if $d3 (i32.ge_u (local.get $i) (local.get $end4)))
        (local.set $e (call $exp4 (f32x4.sub (f32x4.mul (v128.load align=4 (local.get $i)) (local.get $sc)) (f32x4.splat (local.get $m)))))
        (v128.store align=4 (local.get $i) (local.get $e))
        (local.set $acc (f32x4.add (local.get $acc) (local.get $e)))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l3)))
      (local.set $sum (call $hsum (local.get $acc)))
      (block $d4 (loop $l4
        (br_if $d4 (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $ef (call $exp1 (f32.sub (f32.mul (f32.load (local.get $i)) (local.get $scale)) (local.get $m))))
        (f32.store (local.get $i) (local.get $ef))
        (local.set $sum (f32.add (local.get $sum) (local.get $ef)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l4)))
      ;; divided by the sum; zero beyond t
      (local.set $acc (f32x4.splat (local.get $sum)))
      (local.set $i (local.get $row))
      (block $d5 (loop $l5
        (br_if $d5 (i32.ge_u (local.get $i) (local.get $end4)))
        (v128.store align=4 (local.get $i) (f32x4.div (v128.load align=4 (local.get $i)) (local.get $acc)))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l5)))
      (block $d6 (loop $l6
        (br_if $d6 (i32.ge_u (local.get $i) (local.get $end)))
        (f32.store (local.get $i) (f32.div (f32.load (local.get $i)) (local.get $sum)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l6)))
      (call $zero (local.get $end) (i32.sub (local.get $T) (local.get $len)))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $rows))))

  (func (export "causal_softmax_backward") (param $p i32) (param $dp i32) (param $T i32) (param $scale f32)
    (local $t i32) (local $off i32) (local $len i32) (local $n4 i32) (local $j i32) (local $acc v128) (local $dot f32) (local $vd v128) (local $sc v128)
    (local.set $sc (f32x4.splat (local.get $scale)))
    (block $rows_done (loop $rows
      (br_if $rows_done (i32.ge_u (local.get $t) (local.get $T)))
      (local.set $off (i32.shl (i32.mul (local.get $t) (local.get $T)) (i32.const 2)))
      (local.set $len (i32.shl (i32.add (local.get $t) (i32.const 1)) (i32.const 2)))
      (local.set $n4 (i32.and (local.get $len) (i32.const -16)))
      ;; Σ P·dP over u <= t
      (local.set $acc (v128.const f32x4 0 0 0 0))
      (local.set $j (i32.const 0))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $j) (local.get $n4)))
        (local.set $acc (f32x4.add (local.get $acc)
          (f32x4.mul (v128.load align=4 (i32.add (local.get $p) (i32.add (local.get $off) (local.get $j))))
                     (v128.load align=4 (i32.add (local.get $dp) (i32.add (local.get $off) (local.get $j)))))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $l1)))
      (local.set $dot (call $hsum (local.get $acc)))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $j) (local.get $len)))
        (local.set $dot (f32.add (local.get $dot)
          (f32.mul (f32.load (i32.add (local.get $p) (i32.add (local.get $off) (local.get $j))))
                   (f32.load (i32.add (local.get $dp) (i32.add (local.get $off) (local.get $j)))))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l2)))
      ;; dS = P·(dP - dot)·scale
      (local.set $vd (f32x4.splat (local.get $dot)))
      (local.set $j (i32.const 0))
      (block $d3 (loop $l3
        (br_if $d3 (i32.ge_u (local.get $j) (local.get $n4)))
        (v128.store align=4 (i32.add (local.get $dp) (i32.add (local.get $off) (local.get $j)))
          (f32x4.mul (f32x4.mul (v128.load align=4 (i32.add (local.get $p) (i32.add (local.get $off) (local.get $j))))
                                (f32x4.sub (v128.load align=4 (i32.add (local.get $dp) (i32.add (local.get $off) (local.get $j)))) (local.get $vd)))
                     (local.get $sc)))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $l3)))
      (block $d4 (loop $l4
        (br_if $d4 (i32.ge_u (local.get $j) (local.get $len)))
        (f32.store (i32.add (local.get $dp) (i32.add (local.get $off) (local.get $j)))
          (f32.mul (f32.mul (f32.load (i32.add (local.get $p) (i32.add (local.get $off) (local.get $j))))
                            (f32.sub (f32.load (i32.add (local.get $dp) (i32.add (local.get $off) (local.get $j)))) (local.get $dot)))
                   (local.get $scale)))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l4)))
      (call $zero (i32.add (local.get $dp) (i32.add (local.get $off) (local.get $len)))
        (i32.shr_u (i32.sub (i32.shl (local.get $T) (i32.const 2)) (local.get $len)) (i32.const 2)))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $rows))))
)
