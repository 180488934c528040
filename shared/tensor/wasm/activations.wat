;; The GELU of the MLP and the GPT (exact, with erf, as torch.nn.functional.gelu), four lanes at a time, on
;; the kernel arena; $n a multiple of 4 (the caller does a remainder in JavaScript: training/activations.ts).
;;   gelu            out = x·Φ(x) = ½·x·(1 + erf(x/√2))
;;   gelu_backward   g *= Φ(x) + x·φ(x), Φ(x) read back from the forward's output as act/x (near 0: ½ + x·φ(0))
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
      (br $turn)))))
