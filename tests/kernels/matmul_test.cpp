// Placeholder: being written (issue 2).
