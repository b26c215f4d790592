// No function: kiln-reduce has nothing to reduce.
module {
}
