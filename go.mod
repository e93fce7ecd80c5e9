module evented-volume-manager

go 1.26
