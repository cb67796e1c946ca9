package cli

// MainGrace is Main with the grace of its signals, for the tests of what
// a signal after the grace does.
var MainGrace = mainGrace
