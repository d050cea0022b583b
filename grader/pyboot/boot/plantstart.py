plant_main()
