// RUN: kiln-opt %s -kiln-cpu-lower-vectors="fast-exp=maybe" -verify-diagnostics

// Tests that an unknown fast-exp value is an error at the function.

// expected-error@+1 {{kiln-cpu-lower-vectors: fast-exp must be auto, true, avx512, false or off, not 'maybe'}}
func.func @exp(%x: vector<16xf32>) -> vector<16xf32> {
  %r = math.exp %x : vector<16xf32>
  return %r : vector<16xf32>
}
