! SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
! mpi_io_fortran DIR N: MPI-IO from Fortran (mpif.h), whose bindings call
! the C library's PMPI_File_* (Open MPI) or MPI_File_* entry points. Each
! rank, on DIR/fortran.dat: open; N writes and N reads of 4096 bytes at
! its own offsets; one write_all of 4096; one iwrite_at of 4096 finished
! by MPI_WAIT; sync; close. Rank 0 then deletes the file.
program mpi_io_fortran
  implicit none
  include 'mpif.h'
  integer, parameter :: sz = 4096
  integer :: ierr, rank, nranks, fh, i, n, req
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: off
  character(len=4096) :: dir, arg
  character(len=sz) :: buf
  character(len=4200) :: path

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, dir)
  call get_command_argument(2, arg)
  read (arg, *) n
  path = trim(dir) // '/fortran.dat'
  buf = repeat('f', sz)

  call MPI_File_open(MPI_COMM_WORLD, trim(path), ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                     MPI_INFO_NULL, fh, ierr)
  do i = 0, n - 1
    off = (int(rank, MPI_OFFSET_KIND) * (n + 2) + i) * sz
    call MPI_File_write_at(fh, off, buf, sz, MPI_CHARACTER, status, ierr)
  end do
  do i = 0, n - 1
    off = (int(rank, MPI_OFFSET_KIND) * (n + 2) + i) * sz
    call MPI_File_read_at(fh, off, buf, sz, MPI_CHARACTER, status, ierr)
  end do
  off = (int(rank, MPI_OFFSET_KIND) * (n + 2) + n) * sz
  call MPI_File_iwrite_at(fh, off, buf, sz, MPI_CHARACTER, req, ierr)
  call MPI_Wait(req, status, ierr)
  call MPI_File_seek(fh, (int(rank, MPI_OFFSET_KIND) * (n + 2) + n + 1) * sz, MPI_SEEK_SET, ierr)
  call MPI_File_write_all(fh, buf, sz, MPI_CHARACTER, status, ierr)
  call MPI_File_sync(fh, ierr)
  call MPI_File_close(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call MPI_File_delete(trim(path), MPI_INFO_NULL, ierr)
  call MPI_Finalize(ierr)
end program mpi_io_fortran
