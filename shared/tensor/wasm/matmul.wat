;; The three products a Linear layer needs, on fp32 row-major matrices in the imported memory (pointers are
;; byte offsets, sizes count elements), for any shape:
;;   linear_forward  Y = X·Wᵀ + b        X (M×K), W (N×K) as torch's nn.Linear (out, in), Y (M×N)
;;   matmul_nn       C = A·B             A (M×K), B (K×N): dX = dY·W
;;   matmul_tn       C = Aᵀ·B            A (K×M), B (K×N): dW = dYᵀ·X
;;   colsum          c[j] = Σ_i A[i, j]  A (M×N): the bias gradient
;; Register-tiled: a tile of C lives in v128 accumulators while K is walked once. f32x4.relaxed_madd is
;; a*b+c; the build without relaxed SIMD spells it f32x4.add(f32x4.mul(a, b), c). Edges (shapes that are
;; not multiples of the tile) take narrower tiles and scalar loops; every kernel is checked against a
;; plain JavaScript product on awkward shapes.
(module
  (memory (import "e" "m") 1)

  ;; ---- helpers (inlined at build time) ----

  ;; [Σa, Σb, Σc, Σd]: the lanes of four accumulators summed, one per lane.
  (func $hsum4 (param $a v128) (param $b v128) (param $c v128) (param $d v128) (result v128)
    (local $ab v128) (local $cd v128)
    (local.set $ab (f32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $a) (local.get $b))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $a) (local.get $b))))
    (local.set $cd (f32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c) (local.get $d))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c) (local.get $d))))
    (f32x4.add
      (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $ab) (local.get $cd))
      (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $ab) (local.get $cd))))

  ;; Σ x[i]·w[i] for i < n: four lanes at a time, then the rest one by one.
  (func $dot (param $x i32) (param $w i32) (param $n i32) (result f32)
    (local $acc v128) (local $end i32) (local $s f32)
    (local.set $end (i32.add (local.get $x) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (block $done (loop $k
      (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
      (local.set $acc (f32x4.relaxed_madd (v128.load (local.get $x)) (v128.load (local.get $w)) (local.get $acc)))
      (local.set $x (i32.add (local.get $x) (i32.const 16)))
      (local.set $w (i32.add (local.get $w) (i32.const 16)))
      (br $k)))
    (local.set $s (f32x4.extract_lane 0 (call $hsum4 (local.get $acc) (local.get $acc) (local.get $acc) (local.get $acc))))
    (local.set $end (i32.add (local.get $x) (i32.shl (i32.and (local.get $n) (i32.const 3)) (i32.const 2))))
    (block $done (loop $k
      (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
      (local.set $s (f32.add (local.get $s) (f32.mul (f32.load (local.get $x)) (f32.load (local.get $w)))))
      (local.set $x (i32.add (local.get $x) (i32.const 4)))
      (local.set $w (i32.add (local.get $w) (i32.const 4)))
      (br $k)))
    (local.get $s))

  ;; ---- Y = X·Wᵀ + b ----

  ;; Y[r, o..o+4) for rows r, r+1: eight dot products of length K at once (X rows against W rows), the
  ;; lanes summed at the end; K's last K mod 4 terms are added one by one.
  (func $forward_2x4 (param $x i32) (param $w i32) (param $b i32) (param $y i32) (param $K i32) (param $N i32)
    (local $x1 i32) (local $w1 i32) (local $w2 i32) (local $w3 i32) (local $row i32) (local $end i32)
    (local $i i32) (local $tail i32) (local $x0 v128) (local $xb v128) (local $bias v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128)
    (local.set $row (i32.shl (local.get $K) (i32.const 2)))
    (local.set $x1 (i32.add (local.get $x) (local.get $row)))
    (local.set $w1 (i32.add (local.get $w) (local.get $row)))
    (local.set $w2 (i32.add (local.get $w1) (local.get $row)))
    (local.set $w3 (i32.add (local.get $w2) (local.get $row)))
    (local.set $end (i32.shl (i32.and (local.get $K) (i32.const -4)) (i32.const 2)))
    (block $done (loop $k
      (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
      (local.set $x0 (v128.load (i32.add (local.get $x) (local.get $i))))
      (local.set $xb (v128.load (i32.add (local.get $x1) (local.get $i))))
      (local.set $a0 (f32x4.relaxed_madd (local.get $x0) (v128.load (i32.add (local.get $w) (local.get $i))) (local.get $a0)))
      (local.set $c0 (f32x4.relaxed_madd (local.get $xb) (v128.load (i32.add (local.get $w) (local.get $i))) (local.get $c0)))
      (local.set $a1 (f32x4.relaxed_madd (local.get $x0) (v128.load (i32.add (local.get $w1) (local.get $i))) (local.get $a1)))
      (local.set $c1 (f32x4.relaxed_madd (local.get $xb) (v128.load (i32.add (local.get $w1) (local.get $i))) (local.get $c1)))
      (local.set $a2 (f32x4.relaxed_madd (local.get $x0) (v128.load (i32.add (local.get $w2) (local.get $i))) (local.get $a2)))
      (local.set $c2 (f32x4.relaxed_madd (local.get $xb) (v128.load (i32.add (local.get $w2) (local.get $i))) (local.get $c2)))
      (local.set $a3 (f32x4.relaxed_madd (local.get $x0) (v128.load (i32.add (local.get $w3) (local.get $i))) (local.get $a3)))
      (local.set $c3 (f32x4.relaxed_madd (local.get $xb) (v128.load (i32.add (local.get $w3) (local.get $i))) (local.get $c3)))
      (local.set $i (i32.add (local.get $i) (i32.const 16)))
      (br $k)))
    (local.set $bias (v128.load align=4 (local.get $b)))
    (v128.store align=4 (local.get $y)
      (f32x4.add (local.get $bias) (call $hsum4 (local.get $a0) (local.get $a1) (local.get $a2) (local.get $a3))))
    (v128.store align=4 (i32.add (local.get $y) (i32.shl (local.get $N) (i32.const 2)))
      (f32x4.add (local.get $bias) (call $hsum4 (local.get $c0) (local.get $c1) (local.get $c2) (local.get $c3))))
    ;; the last K mod 4 terms
    (local.set $tail (i32.and (local.get $K) (i32.const 3)))
    (if (local.get $tail) (then
      (call $add_tail (local.get $y) (local.get $x) (local.get $w) (local.get $end) (local.get $tail) (local.get $row))
      (call $add_tail (i32.add (local.get $y) (i32.shl (local.get $N) (i32.const 2))) (local.get $x1) (local.get $w) (local.get $end) (local.get $tail) (local.get $row)))))

  ;; y[0..4) += Σ_{t<n} x[at+t]·w_j[at+t] for the four W rows w_j = w + j·row (bytes).
  (func $add_tail (param $y i32) (param $x i32) (param $w i32) (param $at i32) (param $n i32) (param $row i32)
    (local $j i32) (local $wj i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $j) (i32.const 4)))
      (local.set $wj (i32.add (local.get $w) (i32.mul (local.get $j) (local.get $row))))
      (f32.store (i32.add (local.get $y) (i32.shl (local.get $j) (i32.const 2)))
        (f32.add (f32.load (i32.add (local.get $y) (i32.shl (local.get $j) (i32.const 2))))
          (call $dot (i32.add (local.get $x) (local.get $at)) (i32.add (local.get $wj) (local.get $at)) (local.get $n))))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $next))))

  (func (export "linear_forward") (param $x i32) (param $w i32) (param $b i32) (param $y i32) (param $M i32) (param $K i32) (param $N i32)
    (local $o i32) (local $r i32) (local $M2 i32) (local $N4 i32) (local $row i32) (local $yrow i32)
    (local.set $row (i32.shl (local.get $K) (i32.const 2)))
    (local.set $yrow (i32.shl (local.get $N) (i32.const 2)))
    (local.set $M2 (i32.and (local.get $M) (i32.const -2)))
    (local.set $N4 (i32.and (local.get $N) (i32.const -4)))
    ;; tiles of four outputs (a 4-row block of W stays in L1) against every pair of rows
    (block $done_o (loop $next_o
      (br_if $done_o (i32.ge_u (local.get $o) (local.get $N4)))
      (local.set $r (i32.const 0))
      (block $done_r (loop $next_r
        (br_if $done_r (i32.ge_u (local.get $r) (local.get $M2)))
        (call $forward_2x4
          (i32.add (local.get $x) (i32.mul (local.get $r) (local.get $row)))
          (i32.add (local.get $w) (i32.mul (local.get $o) (local.get $row)))
          (i32.add (local.get $b) (i32.shl (local.get $o) (i32.const 2)))
          (i32.add (local.get $y) (i32.add (i32.mul (local.get $r) (local.get $yrow)) (i32.shl (local.get $o) (i32.const 2))))
          (local.get $K) (local.get $N))
        (local.set $r (i32.add (local.get $r) (i32.const 2)))
        (br $next_r)))
      (local.set $o (i32.add (local.get $o) (i32.const 4)))
      (br $next_o)))
    ;; the edges: the last row when M is odd (outputs below N4), and the last N mod 4 outputs of every row
    (if (i32.ne (local.get $M2) (local.get $M)) (then
      (call $forward_dots (local.get $x) (local.get $w) (local.get $b) (local.get $y) (local.get $M2) (local.get $M) (i32.const 0) (local.get $N4) (local.get $K) (local.get $N))))
    (call $forward_dots (local.get $x) (local.get $w) (local.get $b) (local.get $y) (i32.const 0) (local.get $M) (local.get $N4) (local.get $N) (local.get $K) (local.get $N)))

  ;; Y[r, o] = b[o] + dot(X[r], W[o]) for r in [r0, r1), o in [o0, o1): one dot product at a time.
  (func $forward_dots (param $x i32) (param $w i32) (param $b i32) (param $y i32) (param $r0 i32) (param $r1 i32) (param $o0 i32) (param $o1 i32) (param $K i32) (param $N i32)
    (local $r i32) (local $o i32)
    (local.set $r (local.get $r0))
    (block $done_r (loop $next_r
      (br_if $done_r (i32.ge_u (local.get $r) (local.get $r1)))
      (local.set $o (local.get $o0))
      (block $done_o (loop $next_o
        (br_if $done_o (i32.ge_u (local.get $o) (local.get $o1)))
        (f32.store (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (local.get $r) (local.get $N)) (local.get $o)) (i32.const 2)))
          (f32.add (f32.load (i32.add (local.get $b) (i32.shl (local.get $o) (i32.const 2))))
            (call $dot
              (i32.add (local.get $x) (i32.shl (i32.mul (local.get $r) (local.get $K)) (i32.const 2)))
              (i32.add (local.get $w) (i32.shl (i32.mul (local.get $o) (local.get $K)) (i32.const 2)))
              (local.get $K))))
        (local.set $o (i32.add (local.get $o) (i32.const 1)))
        (br $next_o)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $next_r))))

  ;; ---- C = A·B and C = Aᵀ·B: a row (or column) of A broadcast against 8 columns of B ----

  ;; C[0..4, 0..8) = Σ_k a_j(k)·B[k, 0..8), where a_j(k) is at A + j·$aj + k·$ak (bytes): A row-major
  ;; ($aj = K·4, $ak = 4) gives A·B, A transposed ($aj = 4, $ak = M·4) gives Aᵀ·B. B and C rows are $ldb,
  ;; $ldc bytes apart.
  (func $tile_4x8 (param $a i32) (param $aj i32) (param $ak i32) (param $b i32) (param $ldb i32) (param $c i32) (param $ldc i32) (param $K i32)
    (local $k i32) (local $b0 v128) (local $b1 v128) (local $s v128)
    (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128)
    (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128)
    (local $a1 i32) (local $a2 i32) (local $a3 i32)
    (local.set $a1 (i32.add (local.get $a) (local.get $aj)))
    (local.set $a2 (i32.add (local.get $a1) (local.get $aj)))
    (local.set $a3 (i32.add (local.get $a2) (local.get $aj)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $k) (local.get $K)))
      (local.set $b0 (v128.load align=4 (local.get $b)))
      (local.set $b1 (v128.load offset=16 align=4 (local.get $b)))
      (local.set $s (v128.load32_splat (local.get $a)))
      (local.set $c00 (f32x4.relaxed_madd (local.get $s) (local.get $b0) (local.get $c00)))
      (local.set $c01 (f32x4.relaxed_madd (local.get $s) (local.get $b1) (local.get $c01)))
      (local.set $s (v128.load32_splat (local.get $a1)))
      (local.set $c10 (f32x4.relaxed_madd (local.get $s) (local.get $b0) (local.get $c10)))
      (local.set $c11 (f32x4.relaxed_madd (local.get $s) (local.get $b1) (local.get $c11)))
      (local.set $s (v128.load32_splat (local.get $a2)))
      (local.set $c20 (f32x4.relaxed_madd (local.get $s) (local.get $b0) (local.get $c20)))
      (local.set $c21 (f32x4.relaxed_madd (local.get $s) (local.get $b1) (local.get $c21)))
      (local.set $s (v128.load32_splat (local.get $a3)))
      (local.set $c30 (f32x4.relaxed_madd (local.get $s) (local.get $b0) (local.get $c30)))
      (local.set $c31 (f32x4.relaxed_madd (local.get $s) (local.get $b1) (local.get $c31)))
      (local.set $a (i32.add (local.get $a) (local.get $ak)))
      (local.set $a1 (i32.add (local.get $a1) (local.get $ak)))
      (local.set $a2 (i32.add (local.get $a2) (local.get $ak)))
      (local.set $a3 (i32.add (local.get $a3) (local.get $ak)))
      (local.set $b (i32.add (local.get $b) (local.get $ldb)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $next)))
    (v128.store align=4 (local.get $c) (local.get $c00))
    (v128.store offset=16 align=4 (local.get $c) (local.get $c01))
    (local.set $c (i32.add (local.get $c) (local.get $ldc)))
    (v128.store align=4 (local.get $c) (local.get $c10))
    (v128.store offset=16 align=4 (local.get $c) (local.get $c11))
    (local.set $c (i32.add (local.get $c) (local.get $ldc)))
    (v128.store align=4 (local.get $c) (local.get $c20))
    (v128.store offset=16 align=4 (local.get $c) (local.get $c21))
    (local.set $c (i32.add (local.get $c) (local.get $ldc)))
    (v128.store align=4 (local.get $c) (local.get $c30))
    (v128.store offset=16 align=4 (local.get $c) (local.get $c31)))

  ;; One row of the same: C[0, 0..4) = Σ_k a(k)·B[k, 0..4), for the rows and columns the 4x8 tiles leave.
  (func $tile_1x4 (param $a i32) (param $ak i32) (param $b i32) (param $ldb i32) (param $c i32) (param $K i32)
    (local $k i32) (local $acc v128)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $k) (local.get $K)))
      (local.set $acc (f32x4.relaxed_madd (v128.load32_splat (local.get $a)) (v128.load align=4 (local.get $b)) (local.get $acc)))
      (local.set $a (i32.add (local.get $a) (local.get $ak)))
      (local.set $b (i32.add (local.get $b) (local.get $ldb)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $next)))
    (v128.store align=4 (local.get $c) (local.get $acc)))

  ;; One element: C[0, 0] = Σ_k a(k)·B[k, 0].
  (func $tile_1x1 (param $a i32) (param $ak i32) (param $b i32) (param $ldb i32) (param $c i32) (param $K i32)
    (local $k i32) (local $acc f32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $k) (local.get $K)))
      (local.set $acc (f32.add (local.get $acc) (f32.mul (f32.load (local.get $a)) (f32.load (local.get $b)))))
      (local.set $a (i32.add (local.get $a) (local.get $ak)))
      (local.set $b (i32.add (local.get $b) (local.get $ldb)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $next)))
    (f32.store (local.get $c) (local.get $acc)))

  ;; C (M×N) = the product, with element (i, k) of the left operand at A + i·$ai + k·$ak (bytes) and B
  ;; (K×N) row-major. Panels of 8 columns of B outside, row tiles inside: a panel (K×32 bytes) stays in
  ;; cache while every row tile passes over it.
  (func $product (param $a i32) (param $ai i32) (param $ak i32) (param $b i32) (param $c i32) (param $M i32) (param $N i32) (param $K i32)
    (local $n i32) (local $m i32) (local $M4 i32) (local $N8 i32) (local $N4 i32) (local $ldb i32) (local $row i32)
    (local.set $ldb (i32.shl (local.get $N) (i32.const 2)))
    (local.set $M4 (i32.and (local.get $M) (i32.const -4)))
    (local.set $N8 (i32.and (local.get $N) (i32.const -8)))
    (local.set $N4 (i32.and (local.get $N) (i32.const -4)))
    (block $done_n (loop $next_n
      (br_if $done_n (i32.ge_u (local.get $n) (local.get $N8)))
      (local.set $m (i32.const 0))
      (block $done_m (loop $next_m
        (br_if $done_m (i32.ge_u (local.get $m) (local.get $M4)))
        (call $tile_4x8
          (i32.add (local.get $a) (i32.mul (local.get $m) (local.get $ai))) (local.get $ai) (local.get $ak)
          (i32.add (local.get $b) (i32.shl (local.get $n) (i32.const 2))) (local.get $ldb)
          (i32.add (local.get $c) (i32.add (i32.mul (local.get $m) (local.get $ldb)) (i32.shl (local.get $n) (i32.const 2))))
          (local.get $ldb) (local.get $K))
        (local.set $m (i32.add (local.get $m) (i32.const 4)))
        (br $next_m)))
      ;; rows below M4 of this panel
      (block $done_m (loop $next_m
        (br_if $done_m (i32.ge_u (local.get $m) (local.get $M)))
        (local.set $row (i32.add (local.get $c) (i32.add (i32.mul (local.get $m) (local.get $ldb)) (i32.shl (local.get $n) (i32.const 2)))))
        (call $tile_1x4 (i32.add (local.get $a) (i32.mul (local.get $m) (local.get $ai))) (local.get $ak)
          (i32.add (local.get $b) (i32.shl (local.get $n) (i32.const 2))) (local.get $ldb) (local.get $row) (local.get $K))
        (call $tile_1x4 (i32.add (local.get $a) (i32.mul (local.get $m) (local.get $ai))) (local.get $ak)
          (i32.add (local.get $b) (i32.shl (i32.add (local.get $n) (i32.const 4)) (i32.const 2))) (local.get $ldb) (i32.add (local.get $row) (i32.const 16)) (local.get $K))
        (local.set $m (i32.add (local.get $m) (i32.const 1)))
        (br $next_m)))
      (local.set $n (i32.add (local.get $n) (i32.const 8)))
      (br $next_n)))
    ;; a last panel of 4 columns, then single columns, for every row
    (if (i32.lt_u (local.get $n) (local.get $N4)) (then
      (local.set $m (i32.const 0))
      (block $done_m (loop $next_m
        (br_if $done_m (i32.ge_u (local.get $m) (local.get $M)))
        (call $tile_1x4 (i32.add (local.get $a) (i32.mul (local.get $m) (local.get $ai))) (local.get $ak)
          (i32.add (local.get $b) (i32.shl (local.get $n) (i32.const 2))) (local.get $ldb)
          (i32.add (local.get $c) (i32.add (i32.mul (local.get $m) (local.get $ldb)) (i32.shl (local.get $n) (i32.const 2)))) (local.get $K))
        (local.set $m (i32.add (local.get $m) (i32.const 1)))
        (br $next_m)))
      (local.set $n (local.get $N4))))
    (block $done_n (loop $next_n
      (br_if $done_n (i32.ge_u (local.get $n) (local.get $N)))
      (local.set $m (i32.const 0))
      (block $done_m (loop $next_m
        (br_if $done_m (i32.ge_u (local.get $m) (local.get $M)))
        (call $tile_1x1 (i32.add (local.get $a) (i32.mul (local.get $m) (local.get $ai))) (local.get $ak)
          (i32.add (local.get $b) (i32.shl (local.get $n) (i32.const 2))) (local.get $ldb)
          (i32.add (local.get $c) (i32.add (i32.mul (local.get $m) (local.get $ldb)) (i32.shl (local.get $n) (i32.const 2)))) (local.get $K))
        (local.set $m (i32.add (local.get $m) (i32.const 1)))
        (br $next_m)))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $next_n))))

  ;; The product with A's strides given: what a thread computing rows [m0, m1) of C calls (A and C offset
  ;; to row m0, M = m1 - m0, the strides of the whole A).
  (func (export "product") (param $a i32) (param $ai i32) (param $ak i32) (param $b i32) (param $c i32) (param $M i32) (param $N i32) (param $K i32)
    (call $product (local.get $a) (local.get $ai) (local.get $ak) (local.get $b) (local.get $c) (local.get $M) (local.get $N) (local.get $K)))

  ;; C (M×N) = A (M×K) · B (K×N)
  (func (export "matmul_nn") (param $a i32) (param $b i32) (param $c i32) (param $M i32) (param $N i32) (param $K i32)
    (call $product (local.get $a) (i32.shl (local.get $K) (i32.const 2)) (i32.const 4) (local.get $b) (local.get $c) (local.get $M) (local.get $N) (local.get $K)))

  ;; C (M×N) = Aᵀ · B, A (K×M), B (K×N)
  (func (export "matmul_tn") (param $a i32) (param $b i32) (param $c i32) (param $M i32) (param $N i32) (param $K i32)
    (call $product (local.get $a) (i32.const 4) (i32.shl (local.get $M) (i32.const 2)) (local.get $b) (local.get $c) (local.get $M) (local.get $N) (local.get $K)))

  ;; c[j] = Σ_i A[i, j], A (M×N): four columns at a time down the rows, then the last N mod 4 one by one.
  (func (export "colsum") (param $a i32) (param $c i32) (param $M i32) (param $N i32)
    (local $j i32) (local $i i32) (local $p i32) (local $acc v128) (local $s f32) (local $ld i32) (local $N4 i32)
    (local.set $ld (i32.shl (local.get $N) (i32.const 2)))
    (local.set $N4 (i32.and (local.get $N) (i32.const -4)))
    (block $done_j (loop $next_j
      (br_if $done_j (i32.ge_u (local.get $j) (local.get $N4)))
      (local.set $acc (v128.const f32x4 0 0 0 0))
      (local.set $p (i32.add (local.get $a) (i32.shl (local.get $j) (i32.const 2))))
      (local.set $i (i32.const 0))
      (block $done_i (loop $next_i
        (br_if $done_i (i32.ge_u (local.get $i) (local.get $M)))
        (local.set $acc (f32x4.add (local.get $acc) (v128.load align=4 (local.get $p))))
        (local.set $p (i32.add (local.get $p) (local.get $ld)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next_i)))
      (v128.store align=4 (i32.add (local.get $c) (i32.shl (local.get $j) (i32.const 2))) (local.get $acc))
      (local.set $j (i32.add (local.get $j) (i32.const 4)))
      (br $next_j)))
    (block $done_j (loop $next_j
      (br_if $done_j (i32.ge_u (local.get $j) (local.get $N)))
      (local.set $s (f32.const 0))
      (local.set $p (i32.add (local.get $a) (i32.shl (local.get $j) (i32.const 2))))
      (local.set $i (i32.const 0))
      (block $done_i (loop $next_i
        (br_if $done_i (i32.ge_u (local.get $i) (local.get $M)))
        (local.set $s (f32.add (local.get $s) (f32.load (local.get $p))))
        (local.set $p (i32.add (local.get $p) (local.get $ld)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next_i)))
      (f32.store (i32.add (local.get $c) (i32.shl (local.get $j) (i32.const 2))) (local.get $s))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $next_j))))
)
