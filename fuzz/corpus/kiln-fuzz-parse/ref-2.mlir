func.func @types(%a: !kt.ref<4x?xf32>, %b: !kt.ref<f64>, %c: !kt.ref<2x0xi1>, %d: !kt.ref<?xbf16>, %e: !kt.ref<3xi32>, %f: !kt.ref<1xi64>, %g: !kt.ref<2xf16>) -> !kt.ref<4x?xf32> {
  return %a : !kt.ref<4x?xf32>
}
