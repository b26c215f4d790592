kg.program @main(%r: !kt.ref<?x?xf64>, %y: tensor<1x5xf64>, %ri: !kt.ref<?x?xi32>, %yi: tensor<1x5xi32>) {
  kg.graph @main_g0(%r, %y, %ri, %yi) : (!kt.ref<?x?xf64>, tensor<1x5xf64>, !kt.ref<?x?xi32>, tensor<1x5xi32>) -> () {
  ^bb0(%a: !kt.ref<?x?xf64>, %b: tensor<1x5xf64>, %ai: !kt.ref<?x?xi32>, %bi: tensor<1x5xi32>):
    kt.copy_ %a, %b : (!kt.ref<?x?xf64>, tensor<1x5xf64>) -> ()
    kt.add_ %ai, %bi : (!kt.ref<?x?xi32>, tensor<1x5xi32>) -> ()
    kg.yield
  }
  kg.return
}
