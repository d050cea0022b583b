# The last file of the bootstrap: every definition exists now.
main()
