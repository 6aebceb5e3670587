"""service/kinds"""
